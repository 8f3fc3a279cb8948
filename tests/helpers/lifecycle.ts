/** Helpers for the token-lifecycle tests: human tokens through the real flow, workload tokens, audit rows. */
import { and, eq, isNull } from "drizzle-orm";
import { accessTokens, apis, auditEvents, clients, clientSecrets } from "../../db/schema";
import { addMs, MINUTE } from "../../lib/clock";
import { randomToken, sha256Hex } from "../../lib/crypto";
import { basic, exchangeCode, Jar, signIn, type Harness } from "./harness";

export interface HumanTokens {
  access_token: string;
  refresh_token: string;
  id_token: string;
  scope: string;
  jar: Jar;
}

export interface HumanClient {
  client_id: string;
  redirect_uri: string;
  /** Confidential clients authenticate with Basic; public ones send client_id in the body. */
  secret?: string;
}

/** Authorization code flow end to end (hosted sign-in, code exchange); reuses the jar's hosted session. */
export async function humanTokens(
  h: Harness,
  workspaceId: string,
  client: HumanClient,
  user: { email: string; password: string },
  options: { scope?: string; resource?: string; jar?: Jar } = {},
): Promise<HumanTokens> {
  const r = await signIn(h, workspaceId, { client_id: client.client_id, redirect_uri: client.redirect_uri, ...user, scope: options.scope, resource: options.resource }, options.jar);
  const code = r.callback.searchParams.get("code");
  if (!code) throw new Error(`no code in callback ${r.callback}`);
  const res = await exchangeCode(h, workspaceId, {
    code,
    redirect_uri: client.redirect_uri,
    verifier: r.verifier,
    ...(client.secret ? { authorization: basic(client.client_id, client.secret) } : { client_id: client.client_id }),
  });
  if (res.status !== 200) throw new Error(`code exchange answered ${res.status}: ${await res.text()}`);
  return { ...(await res.json()), jar: r.jar };
}

/**
 * A workload (M2M) access token, inserted as the client_credentials grant stores one: bound to the
 * client's newest active secret, subject = client_id, 5 minutes.
 */
export async function insertWorkloadToken(
  h: Harness,
  workspaceId: string,
  clientId: string,
  input: { scope?: string[]; audience?: string | null; ttlMs?: number } = {},
): Promise<{ token: string; credentialId: string }> {
  const db = h.service.db;
  const [client] = await db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, workspaceId), eq(clients.clientId, clientId))).limit(1);
  if (!client) throw new Error(`no client ${clientId}`);
  const secrets = await db
    .select({ id: clientSecrets.id, createdAt: clientSecrets.createdAt })
    .from(clientSecrets)
    .where(and(eq(clientSecrets.workspaceId, workspaceId), eq(clientSecrets.clientPk, client.id), isNull(clientSecrets.revokedAt)));
  const credential = secrets.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
  if (!credential) throw new Error(`client ${clientId} has no active secret`);
  let apiId: string | null = null;
  if (input.audience !== null) {
    const [api] = await db
      .select({ id: apis.id })
      .from(apis)
      .where(and(eq(apis.workspaceId, workspaceId), eq(apis.audience, input.audience ?? "https://api.example.test")))
      .limit(1);
    apiId = api?.id ?? null;
  }
  const now = h.clock.now();
  const token = `lka_${randomToken(32)}`;
  await db.insert(accessTokens).values({
    tokenHash: sha256Hex(token),
    workspaceId,
    clientPk: client.id,
    credentialId: credential.id,
    subject: clientId,
    scope: input.scope ?? ["read:things"],
    apiId,
    createdAt: now,
    expiresAt: addMs(now, input.ttlMs ?? 5 * MINUTE),
  });
  return { token, credentialId: credential.id };
}

export async function auditRows(h: Harness, workspaceId: string, type: string) {
  return h.service.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.workspaceId, workspaceId), eq(auditEvents.type, type)));
}
