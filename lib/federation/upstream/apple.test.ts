import { exportPKCS8, generateKeyPair, jwtVerify, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { appleClientSecret, APPLE_AUDIENCE } from "./apple";
import { FederationError } from "./contract";

const now = new Date("2026-11-21T12:00:00Z");

describe("Apple's client secret JWT", () => {
  it("is ES256 with the key id, issued by the team for the client id to Apple, short-lived", async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const pem = await exportPKCS8(privateKey);
    const jwt = await appleClientSecret({ clientId: "com.acme.signin", clientSecret: pem, apple: { teamId: "TEAM123456", keyId: "KEY1234567" } }, now);
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: "ES256", kid: "KEY1234567" });
    const { payload } = await jwtVerify(jwt, publicKey, { algorithms: ["ES256"], issuer: "TEAM123456", subject: "com.acme.signin", audience: APPLE_AUDIENCE, currentDate: now });
    expect(payload.iat).toBe(now.getTime() / 1000);
    expect(payload.exp! - payload.iat!).toBeGreaterThan(0);
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(183 * 24 * 3600);
  });

  it("refuses a key that is not a P-256 PKCS #8 PEM as misconfigured", async () => {
    const { privateKey } = await generateKeyPair("RS256", { extractable: true });
    for (const secret of ["not a key", await exportPKCS8(privateKey)]) {
      const error = await appleClientSecret({ clientId: "com.acme.signin", clientSecret: secret, apple: { teamId: "TEAM123456", keyId: "KEY1234567" } }, now).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FederationError);
      expect((error as FederationError).code).toBe("misconfigured");
    }
  });
});
