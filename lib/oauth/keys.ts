import { and, eq, gt, inArray, isNull, or } from "drizzle-orm";
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from "jose";
import { signingKeys } from "../../db/schema";
import { decryptSecret, encryptSecret, newId } from "../crypto";
import type { Service } from "../service";

const ALG = "ES256";
const PURPOSE = "signing-key";
/** How long the active key id of a workspace may be reused from memory before re-reading it. */
const ACTIVE_KEY_TTL_MS = 30_000;

interface ActiveKey {
  kid: string;
  key: CryptoKey;
  loadedAt: number;
}

function cacheKey(workspaceId: string) {
  return `signing-key:${workspaceId}`;
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
      service.cache.set(cacheKey(workspaceId), entry);
      return entry;
    }
    await createActiveKey(service, workspaceId);
  }
  throw new Error(`No signing key could be created for workspace ${workspaceId}`);
}

/** Published keys: the active one, any pre-published successor, and retired keys still verifying tokens. */
export async function getPublicJwks(service: Service, workspaceId: string): Promise<JWK[]> {
  const now = service.clock.now();
  const query = () =>
    service.db
      .select({ publicJwk: signingKeys.publicJwk, status: signingKeys.status })
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
  return rows.map((r) => r.publicJwk as JWK);
}

export async function signJwt(service: Service, workspaceId: string, payload: JWTPayload): Promise<string> {
  const { kid, key } = await getActiveSigningKey(service, workspaceId);
  return new SignJWT(payload).setProtectedHeader({ alg: ALG, kid, typ: "JWT" }).sign(key);
}
