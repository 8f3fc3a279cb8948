import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateSpKeyPair, keyMatchesCertificate } from "./self-signed-certificate";

const NOW = new Date("2026-11-21T12:00:00Z");

describe("the SP key pair's certificate", () => {
  it("parses and verifies whatever the serial's random bytes: a leading zero or high bit is never written as such", () => {
    for (const hex of ["00" + "01".repeat(15), "80" + "ff".repeat(15), "00".repeat(16), "ff".repeat(16)]) {
      const pair = generateSpKeyPair("sp test", NOW, Buffer.from(hex, "hex"));
      const certificate = new X509Certificate(pair.certificatePem);
      expect(certificate.serialNumber).toMatch(/^[4-7][0-9A-F]{31}$/);
      expect(certificate.subject).toBe("CN=sp test");
      expect(keyMatchesCertificate(pair.privateKeyPem, pair.certificatePem)).toBe(true);
    }
  });
});
