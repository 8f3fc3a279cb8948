/**
 * Authenticator apps in tests: give a user a confirmed factor with a known seed, compute its codes
 * at the harness clock, and drive a sign-in through the password and the code without the forms.
 */
import { and, eq } from "drizzle-orm";
import { Secret } from "otpauth";
import { totpFactors, users } from "../../../db/schema";
import { encryptSecret, newId } from "../../../lib/crypto";
import type { EndpointContext } from "../../../lib/http/context";
import { stepAt, totpCode } from "../../../lib/authn/factors/totp";
import { contextFor, resolveWorkspace } from "../../../lib/server/router";
import { signInView, type SignInView } from "../../../lib/sign-in/view";
import { authorizeQuery, call, Jar, PUBLIC_URL, type AuthorizeParams, type Harness } from "../harness";

export type StepView = Extract<SignInView, { kind: "step" }>;

export async function workspaceContext(h: Harness, workspaceId: string): Promise<EndpointContext> {
  return contextFor(h.service, (await resolveWorkspace(h.service, workspaceId))!);
}

export async function userIdOf(h: Harness, workspaceId: string, email: string): Promise<string> {
  const [row] = await h.service.db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.workspaceId, workspaceId), eq(users.emailNormalized, email.toLowerCase())));
  if (!row) throw new Error(`no user ${email}`);
  return row.id;
}

/** A confirmed authenticator app for the user, as enrolment leaves it (no step used yet): returns its id and seed. */
export async function giveTotp(h: Harness, workspaceId: string, email: string): Promise<{ factorId: string; seed: string }> {
  const seed = new Secret({ size: 20 }).base32;
  const factorId = newId();
  const now = h.clock.now();
  await h.service.db.insert(totpFactors).values({
    id: factorId,
    workspaceId,
    userId: await userIdOf(h, workspaceId, email),
    secretEncrypted: encryptSecret(h.service.config.masterKey, seed, "totp-seed"),
    name: "Authenticator app",
    createdAt: now,
    confirmedAt: now,
  });
  return { factorId, seed };
}

/** The code of `seed` at the harness clock, `offset` steps away. */
export function codeAt(h: Harness, seed: string, offset = 0): string {
  return totpCode(seed, stepAt(h.clock.now()) + offset);
}

/** A sign-in in progress: its transaction, the browser's jar and the client's PKCE values. */
export interface PendingSignIn {
  workspaceId: string;
  tx: string;
  jar: Jar;
  verifier: string;
  state: string;
  nonce: string;
}

/** authorize: opens a transaction (the browser's jar gets its cookie). */
export async function startSignIn(h: Harness, workspaceId: string, p: AuthorizeParams, jar = new Jar()): Promise<PendingSignIn> {
  const { query, verifier, state, nonce } = authorizeQuery(p);
  const res = await call(h, `/t/${workspaceId}/oauth2/authorize?${query}`, { cookie: jar.header() });
  if (res.status !== 303) throw new Error(`authorize answered ${res.status}`);
  jar.take(res);
  const location = new URL(res.headers.get("location")!, PUBLIC_URL);
  if (location.pathname !== `/t/${workspaceId}/sign-in`) throw new Error(`authorize did not ask for a sign-in: ${location}`);
  return { workspaceId, tx: location.searchParams.get("tx")!, jar, verifier, state, nonce };
}

/** What the sign-in page would show now. */
export async function viewOf(h: Harness, s: PendingSignIn): Promise<StepView> {
  const view = await signInView(await workspaceContext(h, s.workspaceId), s.tx, s.jar.header());
  if (view.kind !== "step") throw new Error("sign-in transaction expired");
  return view;
}

/** Posts a step's form (with the transaction, its CSRF token and the jar's cookies) as the browser would. */
export async function postStep(h: Harness, s: PendingSignIn, path: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Response> {
  const view = await viewOf(h, s);
  const res = await call(h, `/t/${s.workspaceId}${path}`, {
    form: { tx: s.tx, csrf: view.csrf, ...fields },
    cookie: s.jar.header(),
    headers: { origin: PUBLIC_URL, ...headers },
  });
  s.jar.take(res);
  return res;
}

/** Where a step's answer sent the browser: the sign-in page (with its `error`, if any) or the client's callback. */
export function outcome(res: Response): { page: "sign-in"; error: string | null } | { page: "callback"; url: URL } {
  if (res.status !== 303) throw new Error(`step answered ${res.status}`);
  const url = new URL(res.headers.get("location")!, PUBLIC_URL);
  if (url.origin === PUBLIC_URL && url.pathname.endsWith("/sign-in")) return { page: "sign-in", error: url.searchParams.get("error") };
  return { page: "callback", url };
}

/** authorize, then the password: the sign-in stands at whatever step the policy asks next. */
export async function passwordStep(h: Harness, workspaceId: string, p: AuthorizeParams & { email: string; password: string }, jar = new Jar()): Promise<PendingSignIn> {
  const s = await startSignIn(h, workspaceId, p, jar);
  const res = await postStep(h, s, "/sign-in/password", { email: p.email, password: p.password });
  const o = outcome(res);
  if (o.page !== "sign-in" || o.error) throw new Error(`password step: ${o.page === "sign-in" ? o.error : "completed"}`);
  return s;
}

/** Signs in with the password and the authenticator code of `seed` at the harness clock; returns the callback. */
export async function signInWithTotp(
  h: Harness,
  workspaceId: string,
  p: AuthorizeParams & { email: string; password: string; seed: string },
  jar = new Jar(),
): Promise<PendingSignIn & { callback: URL }> {
  const s = await passwordStep(h, workspaceId, p, jar);
  const o = outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, p.seed) }));
  if (o.page !== "callback") throw new Error(`authenticator code refused: ${o.error}`);
  return { ...s, callback: o.url };
}
