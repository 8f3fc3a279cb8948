/**
 * A SAML connection's SP key pair: an RSA key and a self-signed X.509 certificate carrying its
 * public key, which the identity provider pins from our SP metadata (signed AuthnRequests, and
 * assertions encrypted to us). SAML peers read only the key from it, so it is minimal: version 3,
 * a random serial, the subject as issuer, ten years' validity, SHA-256 with RSA. Node can parse
 * and verify certificates but not make them, so the DER is written here (a few fixed shapes).
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from "node:crypto";

const SHA256_WITH_RSA = "2a864886f70d01010b"; // 1.2.840.113549.1.1.11
const COMMON_NAME = "550403"; // 2.5.4.3

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, ...content: Buffer[]) => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const sequence = (...content: Buffer[]) => tlv(0x30, ...content);
const oid = (hex: string) => tlv(0x06, Buffer.from(hex, "hex"));
const algorithm = sequence(oid(SHA256_WITH_RSA), Buffer.from([0x05, 0x00]));
const name = (cn: string) => sequence(tlv(0x31, sequence(oid(COMMON_NAME), tlv(0x0c, Buffer.from(cn, "utf8")))));
/** GeneralizedTime (valid for any year; UTCTime would stop at 2049). */
const time = (at: Date) => tlv(0x18, Buffer.from(`${at.toISOString().slice(0, 19).replace(/[-:T]/g, "")}Z`, "ascii"));

export interface SpKeyPair {
  privateKeyPem: string;
  certificatePem: string;
}

/**
 * A fresh RSA-2048 key and its self-signed certificate, named `commonName`, valid from `now` for
 * ten years. `random`: the serial's 16 random bytes (given by tests).
 */
export function generateSpKeyPair(commonName: string, now: Date, random: Buffer = randomBytes(16)): SpKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const serial = Buffer.from(random);
  // A positive INTEGER in DER's minimal form: the first byte neither has its high bit set (negative)
  // nor is zero (a redundant leading byte, which parsers refuse: 1 in 256 keys once failed here).
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + 10);
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))), // [0] version v3
    tlv(0x02, serial),
    algorithm,
    name(commonName),
    sequence(time(new Date(now.getTime() - 60_000)), time(notAfter)),
    name(commonName),
    publicKey.export({ type: "spki", format: "der" }),
  );
  const signature = sign("sha256", tbs, privateKey);
  const der = sequence(tbs, algorithm, tlv(0x03, Buffer.from([0]), signature));
  const certificate = new X509Certificate(der);
  if (!certificate.verify(publicKey)) throw new Error("The generated certificate does not verify");
  return { privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), certificatePem: certificate.toString() };
}

/** Whether `privateKeyPem` is the private key of `certificatePem`. */
export function keyMatchesCertificate(privateKeyPem: string, certificatePem: string): boolean {
  try {
    return new X509Certificate(certificatePem).checkPrivateKey(createPrivateKey(privateKeyPem));
  } catch {
    return false;
  }
}
