import { and, eq, gt, inArray, isNull, or, sql } from "drizzle-orm";
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from "jose";
import { signingKeys } from "../../db/schema";
import { CodedError } from "../coded-error";
import { decryptSecret, encryptSecret, newId } from "../crypto";
import { announceChange, cacheGeneration, cacheIfCurrent, forgetWorkspace, workspaceCacheKey, type Service } from "../service";

const ALG = "ES256";
const PURPOSE = "signing-key";
/**
 * How long the active key of a workspace may be reused from memory before re-reading it. An
 * activation is heard of at once (announced, lib/service.ts); this bounds it when the
 * announcement is lost.
 */
const ACTIVE_KEY_TTL_MS = 30_000;

interface ActiveKey {
  kid: string;
  key: CryptoKey;
  loadedAt: number;
}

function cacheKey(workspaceId: string) {
  return workspaceCacheKey("signing-key", workspaceId);
}

/** Creates the workspace's first key on first use; concurrent creators converge on one. */
async function createActiveKey(service: Service, workspaceId: string): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
  const kid = newId();
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: "sig" };
  const privateJwk = await exportJWK(privateKey);
  const now = service.clock.now();
  await service.db
    .insert(signingKeys)
    .values({
      kid,
      workspaceId,
      alg: ALG,
      publicJwk,
      privateJwkEncrypted: encryptSecret(service.config.masterKey, JSON.stringify(privateJwk), `${PURPOSE}:${kid}`),
      status: "active",
      createdAt: now,
      activatedAt: now,
    })
    .onConflictDoNothing();
}

export async function getActiveSigningKey(service: Service, workspaceId: string): Promise<{ kid: string; key: CryptoKey }> {
  const cached = service.cache.get(cacheKey(workspaceId)) as ActiveKey | undefined;
  if (cached && Date.now() - cached.loadedAt < ACTIVE_KEY_TTL_MS) return cached;
  const generation = cacheGeneration(service);
  for (let attempt = 0; attempt < 2; attempt++) {
    const [row] = await service.db
      .select()
      .from(signingKeys)
      .where(and(eq(signingKeys.workspaceId, workspaceId), eq(signingKeys.status, "active")))
      .limit(1);
    if (row) {
      if (cached && cached.kid === row.kid) {
        cached.loadedAt = Date.now();
        return cached;
      }
      const jwk = JSON.parse(decryptSecret(service.config.masterKey, row.privateJwkEncrypted, `${PURPOSE}:${row.kid}`)) as JWK;
      const key = (await importJWK(jwk, ALG)) as CryptoKey;
      const entry: ActiveKey = { kid: row.kid, key, loadedAt: Date.now() };
      cacheIfCurrent(service, generation, cacheKey(workspaceId), entry);
      return entry;
    }
    await createActiveKey(service, workspaceId);
  }
  throw new Error(`No signing key could be created for workspace ${workspaceId}`);
}

/**
 * Published keys: the active one, any pre-published successor, and retired keys still verifying
 * tokens; with the first time one of them leaves the list by itself (a retired key's
 * unpublishAt), if any, after which the list must be read again.
 */
export async function getPublicJwks(service: Service, workspaceId: string): Promise<{ keys: JWK[]; unpublishedAt: Date | null }> {
  const now = service.clock.now();
  const query = () =>
    service.db
      .select({ publicJwk: signingKeys.publicJwk, status: signingKeys.status, unpublishAt: signingKeys.unpublishAt })
      .from(signingKeys)
      .where(
        and(
          eq(signingKeys.workspaceId, workspaceId),
          or(
            inArray(signingKeys.status, ["active", "published"]),
            and(eq(signingKeys.status, "retired"), or(isNull(signingKeys.unpublishAt), gt(signingKeys.unpublishAt, now))),
          ),
        ),
      );
  let rows = await query();
  if (!rows.some((r) => r.status === "active")) {
    await createActiveKey(service, workspaceId);
    rows = await query();
  }
  let unpublishedAt: Date | null = null;
  for (const r of rows) if (r.status === "retired" && r.unpublishAt && (!unpublishedAt || r.unpublishAt < unpublishedAt)) unpublishedAt = r.unpublishAt;
  return { keys: rows.map((r) => r.publicJwk as JWK), unpublishedAt };
}

export async function signJwt(service: Service, workspaceId: string, payload: JWTPayload): Promise<string> {
  const { kid, key } = await getActiveSigningKey(service, workspaceId);
  return new SignJWT(payload).setProtectedHeader({ alg: ALG, kid, typ: "JWT" }).sign(key);
}

// ---------------------------------------------------------------------------------------------
// Rotation: publish, then activate. A new key appears in JWKS before it signs anything; the old
// key stays in JWKS until every token it signed has expired.
//
//   published ──(≥ JWKS_MAX_AGE_MS later)──▶ active ──(next activation)──▶ retired ──(unpublishAt)──▶ gone
//
// JWKS is built from the database once per change (discovery.ts): a publication or an activation
// is announced to every process (lib/service.ts), which drops what it built, so every process
// serves a published key at once (within DOCUMENT_TTL_MS, 30 s, if the announcement is lost); a
// retired key leaves it at its unpublishAt, by time. Verifiers may cache JWKS for its max-age
// (300 s, see discovery.ts), so a key must have been published that long before it signs, or a
// verifier with a fresh cache would miss its kid.
// An activation is announced to every process (lib/service.ts), which then signs with the new key
// at once; if the announcement is lost, a process keeps the old key for up to ACTIVE_KEY_TTL_MS,
// so the retired key stays published for the ID-token lifetime plus that cache window plus a
// minute of clock skew.

/** JWKS responses may be cached this long (discovery.ts sends max-age=300). */
export const JWKS_MAX_AGE_MS = 300_000;
/** ID tokens are the only JWTs signed; they live 5 minutes (issue.ts ID_TOKEN_TTL_MS). */
const SIGNED_TOKEN_TTL_MS = 300_000;
export const RETIRED_KEY_PUBLISHED_MS = SIGNED_TOKEN_TTL_MS + ACTIVE_KEY_TTL_MS + 60_000;

export class SigningKeyError extends CodedError<"not_ready" | "no_published_key" | "already_published"> {
  constructor(
    readonly code: "not_ready" | "no_published_key" | "already_published",
    message: string,
  ) {
    super(code, message, { status: 409 });
    this.name = "SigningKeyError";
  }
}

export type SigningKeyRow = typeof signingKeys.$inferSelect;

export interface SigningKeyInfo {
  kid: string;
  status: "published" | "active" | "retired";
  createdAt: Date;
  activatedAt: Date | null;
  retiredAt: Date | null;
  unpublishAt: Date | null;
  /** Still in JWKS. */
  inJwks: boolean;
  /** For a published key: when it may be activated. */
  activatableAt: Date | null;
}

/** The workspace's keys, newest first, without private material. */
export async function listSigningKeys(service: Service, workspaceId: string): Promise<SigningKeyInfo[]> {
  const now = service.clock.now();
  const rows = await service.db.select().from(signingKeys).where(eq(signingKeys.workspaceId, workspaceId));
  return rows
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
    .map((r) => ({
      kid: r.kid,
      status: r.status,
      createdAt: r.createdAt,
      activatedAt: r.activatedAt,
      retiredAt: r.retiredAt,
      unpublishAt: r.unpublishAt,
      inJwks: r.status !== "retired" || r.unpublishAt === null || r.unpublishAt > now,
      activatableAt: r.status === "published" ? new Date(r.createdAt.getTime() + JWKS_MAX_AGE_MS) : null,
    }));
}

/**
 * Step 1 of a rotation: generates the next key and publishes it in JWKS without signing with it.
 * Refused while another published key waits for activation.
 */
export async function publishNextSigningKey(service: Service, workspaceId: string): Promise<{ kid: string; activatableAt: Date }> {
  const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
  const kid = newId();
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: "sig" };
  const privateJwk = await exportJWK(privateKey);
  const published = await service.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:signing-keys:${workspaceId}`}))`);
    const [pending] = await tx
      .select({ kid: signingKeys.kid })
      .from(signingKeys)
      .where(and(eq(signingKeys.workspaceId, workspaceId), eq(signingKeys.status, "published")))
      .limit(1);
    if (pending) throw new SigningKeyError("already_published", "A new key is already published and waiting to be activated");
    const now = service.clock.now();
    await tx.insert(signingKeys).values({
      kid,
      workspaceId,
      alg: ALG,
      publicJwk,
      privateJwkEncrypted: encryptSecret(service.config.masterKey, JSON.stringify(privateJwk), `${PURPOSE}:${kid}`),
      status: "published",
      createdAt: now,
    });
    await announceChange(tx, workspaceId);
    return { kid, activatableAt: new Date(now.getTime() + JWKS_MAX_AGE_MS) };
  });
  // This process serves the new key in JWKS at once, the others as the announcement reaches them.
  forgetWorkspace(service, workspaceId);
  return published;
}

/**
 * Step 2: the published key starts signing; the active key is retired and stays in JWKS for
 * RETIRED_KEY_PUBLISHED_MS. Refused until the published key has been in JWKS for JWKS_MAX_AGE_MS.
 */
export async function activatePublishedKey(service: Service, workspaceId: string): Promise<{ kid: string; retired: string | null; unpublishAt: Date | null }> {
  const result = await service.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:signing-keys:${workspaceId}`}))`);
    const now = service.clock.now();
    const [next] = await tx
      .select()
      .from(signingKeys)
      .where(and(eq(signingKeys.workspaceId, workspaceId), eq(signingKeys.status, "published")))
      .limit(1);
    if (!next) throw new SigningKeyError("no_published_key", "Publish a new key first");
    const ready = new Date(next.createdAt.getTime() + JWKS_MAX_AGE_MS);
    if (ready > now) {
      throw new SigningKeyError("not_ready", `The new key has been published for less than ${JWKS_MAX_AGE_MS / 1000} s; it can sign from ${ready.toISOString()}`);
    }
    const unpublishAt = new Date(now.getTime() + RETIRED_KEY_PUBLISHED_MS);
    const retired = await tx
      .update(signingKeys)
      .set({ status: "retired", retiredAt: now, unpublishAt })
      .where(and(eq(signingKeys.workspaceId, workspaceId), eq(signingKeys.status, "active")))
      .returning({ kid: signingKeys.kid });
    await tx.update(signingKeys).set({ status: "active", activatedAt: now }).where(eq(signingKeys.kid, next.kid));
    await announceChange(tx, workspaceId);
    return { kid: next.kid, retired: retired[0]?.kid ?? null, unpublishAt: retired.length ? unpublishAt : null };
  });
  // This process signs with the new key (and serves the new JWKS) at once, the others as the announcement reaches them.
  forgetWorkspace(service, workspaceId);
  return result;
}
