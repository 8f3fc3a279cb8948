/**
 * A software WebAuthn authenticator for tests, and helpers that drive the sign-in's WebAuthn steps.
 *
 * The authenticator makes real registration and assertion responses, as a browser would return
 * them from navigator.credentials.create / get (the JSON @simplewebauthn/browser produces): a key
 * pair from node:crypto, authenticator data (RP ID hash, flags, signature counter, attested
 * credential data), client data JSON, and a "none" attestation object in CBOR (a minimal encoder
 * below). Every field can be bent per call to test what the server refuses.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { webauthnCredentials } from "../../../db/schema";
import { newId } from "../../../lib/crypto";
import { PUBLIC_URL, type Harness } from "../harness";
import { postStep, viewOf, type PendingSignIn } from "./sign-in";

// --- a minimal CBOR encoder (RFC 8949): what attestation objects and COSE keys need ---

type Cbor = number | string | Uint8Array | Cbor[] | Map<number | string, Cbor>;

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "utf8");
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

// --- keys ---

export type Algorithm = "ES256" | "EdDSA" | "RS256" | "ES384";

/** A key pair and its COSE public key (RFC 9053). */
function keyPair(alg: Algorithm): { privateKey: KeyObject; cose: Buffer } {
  if (alg === "ES256" || alg === "ES384") {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: alg === "ES256" ? "P-256" : "P-384" });
    const jwk = publicKey.export({ format: "jwk" });
    const cose = new Map<number, Cbor>([
      [1, 2], // kty: EC2
      [3, alg === "ES256" ? -7 : -35],
      [-1, alg === "ES256" ? 1 : 2], // crv: P-256 / P-384
      [-2, Buffer.from(jwk.x!, "base64url")],
      [-3, Buffer.from(jwk.y!, "base64url")],
    ]);
    return { privateKey, cose: cbor(cose) };
  }
  if (alg === "EdDSA") {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const jwk = publicKey.export({ format: "jwk" });
    return { privateKey, cose: cbor(new Map<number, Cbor>([[1, 1], [3, -8], [-1, 6], [-2, Buffer.from(jwk.x!, "base64url")]])) };
  }
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = publicKey.export({ format: "jwk" });
  return { privateKey, cose: cbor(new Map<number, Cbor>([[1, 3], [3, -257], [-1, Buffer.from(jwk.n!, "base64url")], [-2, Buffer.from(jwk.e!, "base64url")]])) };
}

function signWith(alg: Algorithm, key: KeyObject, data: Buffer): Buffer {
  if (alg === "EdDSA") return sign(null, data, key);
  return sign(alg === "ES384" ? "sha384" : "sha256", data, key);
}

// --- the authenticator ---

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface SoftCredential {
  id: string;
  /** The RP ID it was created for: an authenticator offers it only to a request for that RP ID. */
  rpId: string;
  alg: Algorithm;
  privateKey: KeyObject;
  cose: Buffer;
  userHandle: string | null;
  counter: number;
}

/** Per-call deviations from a well-behaved authenticator and browser. */
export interface Bend {
  origin?: string;
  rpId?: string;
  challenge?: string;
  /** User presence / verification flags (default: present and verified). */
  up?: boolean;
  uv?: boolean;
  /** Registration: the key algorithm and a chosen credential id. */
  alg?: Algorithm;
  credentialId?: string;
  /** Assertion: which credential, and a forced counter value. */
  credential?: SoftCredential;
  counter?: number;
  userHandle?: string | null;
  /** The client data's `type`. */
  type?: string;
}

interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}
interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: { id: string }[];
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];
  /** Counters start at 0 and step by 1 unless told otherwise (0 forever: an authenticator without a counter). */
  constructor(
    readonly defaults: { origin?: string; counterStep?: number; uv?: boolean } = {},
  ) {}

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), "utf8");
  }

  private flags(bend: Bend, extra = 0): number {
    return ((bend.up ?? true) ? FLAG_UP : 0) | ((bend.uv ?? this.defaults.uv ?? true) ? FLAG_UV : 0) | extra;
  }

  /** navigator.credentials.create: a new credential for the options' RP and user. */
  register(options: CreationOptions, bend: Bend = {}) {
    const alg = bend.alg ?? "ES256";
    const { privateKey, cose } = keyPair(alg);
    const id = bend.credentialId ?? randomBytes(16).toString("base64url");
    const rpId = bend.rpId ?? options.rp.id ?? new URL(PUBLIC_URL).hostname;
    const credential: SoftCredential = { id, rpId, alg, privateKey, cose, userHandle: options.user.id, counter: 0 };
    const idBytes = Buffer.from(id, "base64url");
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(idBytes.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([this.flags(bend, FLAG_AT)]),
      u32(0),
      Buffer.alloc(16), // AAGUID: none
      idLength,
      idBytes,
      cose,
    ]);
    const attestationObject = cbor(new Map<string, Cbor>([["fmt", "none"], ["attStmt", new Map()], ["authData", authData]]));
    this.credentials.push(credential);
    return {
      credential,
      response: {
        id,
        rawId: id,
        type: "public-key",
        response: {
          clientDataJSON: b64(this.clientData(bend.type ?? "webauthn.create", bend.challenge ?? options.challenge, bend.origin ?? this.defaults.origin ?? PUBLIC_URL)),
          attestationObject: b64(attestationObject),
          transports: ["internal"],
        },
        clientExtensionResults: {},
        authenticatorAttachment: "platform",
      },
    };
  }

  /** Whether a credential for these options is here, as the browser would find one: of the options' RP ID, allowed by the options. */
  has(options: RequestOptions): boolean {
    return this.usable(options) !== undefined;
  }

  private usable(options: RequestOptions): SoftCredential | undefined {
    const allowed = options.allowCredentials?.map((c) => c.id);
    const rpId = options.rpId ?? new URL(PUBLIC_URL).hostname;
    return this.credentials.find((c) => c.rpId === rpId && (!allowed || allowed.length === 0 || allowed.includes(c.id)));
  }

  /** navigator.credentials.get: an assertion by the first usable credential (or the one named, whatever the options). */
  assert(options: RequestOptions, bend: Bend = {}) {
    const credential = bend.credential ?? this.usable(options);
    if (!credential) throw new Error("no credential for these options");
    credential.counter = bend.counter ?? credential.counter + (this.defaults.counterStep ?? 1);
    const rpId = bend.rpId ?? options.rpId ?? new URL(PUBLIC_URL).hostname;
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.flags(bend)]), u32(credential.counter)]);
    const clientDataJSON = this.clientData(bend.type ?? "webauthn.get", bend.challenge ?? options.challenge, bend.origin ?? this.defaults.origin ?? PUBLIC_URL);
    const signature = signWith(credential.alg, credential.privateKey, Buffer.concat([authData, createHash("sha256").update(clientDataJSON).digest()]));
    const userHandle = bend.userHandle === undefined ? credential.userHandle : bend.userHandle;
    return {
      id: credential.id,
      rawId: credential.id,
      type: "public-key",
      response: {
        clientDataJSON: b64(clientDataJSON),
        authenticatorData: b64(authData),
        signature: b64(signature),
        ...(userHandle ? { userHandle } : {}),
      },
      clientExtensionResults: {},
    };
  }

  /** A credential stored for the user directly, as if registered earlier under `rpId` (tests that only sign in). */
  async enrol(
    h: Harness,
    workspaceId: string,
    userId: string,
    kind: "passkey" | "security_key",
    alg: Algorithm = "ES256",
    rpId = new URL(PUBLIC_URL).hostname,
  ): Promise<SoftCredential & { rowId: string }> {
    const { privateKey, cose } = keyPair(alg);
    const credential: SoftCredential = { id: randomBytes(16).toString("base64url"), rpId, alg, privateKey, cose, userHandle: Buffer.from(userId).toString("base64url"), counter: 0 };
    const rowId = newId();
    await h.service.db.insert(webauthnCredentials).values({
      id: rowId,
      workspaceId,
      userId,
      credentialId: credential.id,
      publicKey: cose.toString("base64url"),
      counter: 0,
      transports: kind === "passkey" ? ["internal"] : ["usb"],
      kind,
      rpId,
      name: kind === "passkey" ? "Passkey" : "Security key",
      createdAt: h.clock.now(),
    });
    this.credentials.push(credential);
    return { ...credential, rowId };
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest();
const b64 = (bytes: Buffer) => bytes.toString("base64url");
function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

// --- the sign-in's WebAuthn steps ---

/** Signs in with a passkey on the first step: the page's options, the authenticator's assertion, the post (from `headers`' client address, if any). */
export async function postPasskey(h: Harness, s: PendingSignIn, authenticator: SoftAuthenticator, bend: Bend = {}, headers: Record<string, string> = {}): Promise<Response> {
  const view = await viewOf(h, s);
  if (!view.webauthn.options) throw new Error(`no passkey options at step ${view.step.kind}`);
  const assertion = authenticator.assert(JSON.parse(view.webauthn.options), bend);
  return postStep(h, s, "/sign-in/passkey", { response: JSON.stringify(assertion) }, { csrf: view.csrf, headers });
}

/** Answers the second-factor step with a security key or passkey. */
export async function postSecondFactorKey(h: Harness, s: PendingSignIn, authenticator: SoftAuthenticator, bend: Bend = {}, headers: Record<string, string> = {}): Promise<Response> {
  const view = await viewOf(h, s);
  if (!view.webauthn.options) throw new Error(`no WebAuthn options at step ${view.step.kind}`);
  const assertion = authenticator.assert(JSON.parse(view.webauthn.options), bend);
  return postStep(h, s, "/sign-in/webauthn", { response: JSON.stringify(assertion) }, { csrf: view.csrf, headers });
}

/** Registers a new credential at the enrolment step or the passkey offer. */
export async function postRegistration(h: Harness, s: PendingSignIn, authenticator: SoftAuthenticator, kind: "passkey" | "security_key", bend: Bend = {}) {
  const view = await viewOf(h, s);
  const json = kind === "passkey" ? view.webauthn.creation?.passkey : view.webauthn.creation?.securityKey;
  if (!json) throw new Error(`no ${kind} creation options at step ${view.step.kind}`);
  const { credential, response } = authenticator.register(JSON.parse(json), bend);
  const res = await postStep(h, s, "/sign-in/webauthn/register", { kind, response: JSON.stringify(response) }, { csrf: view.csrf });
  return { res, credential, response };
}
