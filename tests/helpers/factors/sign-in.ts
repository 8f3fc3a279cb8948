/**
 * Driving a hosted sign-in in tests without the forms: authorize opens a transaction, each step's
 * form is posted as the browser would (transaction, CSRF token, the jar's cookies, same origin),
 * and each answer is read as where it sent the browser. The factor helpers build on these.
 */
import { and, eq } from "drizzle-orm";
import { users } from "../../../db/schema";
import type { EndpointContext } from "../../../lib/http/context";
import { contextFor, resolveWorkspace } from "../../../lib/server/router";
import { signInView, type SignInView } from "../../../lib/sign-in/view";
import { authorizeQuery, call, Jar, PUBLIC_URL, type AuthorizeParams, type Harness } from "../harness";

export type StepView = Extract<SignInView, { kind: "step" }>;

/** The context of a workspace's page at `host` (a verified workspace hostname; null: the default host). */
export async function workspaceContext(h: Harness, workspaceId: string, host: string | null = null): Promise<EndpointContext> {
  return contextFor(h.service, (await resolveWorkspace(h.service, workspaceId))!, host);
}

/** What a browser at `host` sends with every request (null: the default host, PUBLIC_URL's). */
export function browserAt(host: string | null): { host?: string; origin: string } {
  return host === null ? { origin: PUBLIC_URL } : { host, origin: `https://${host}` };
}

export async function userIdOf(h: Harness, workspaceId: string, email: string): Promise<string> {
  const [row] = await h.service.db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.workspaceId, workspaceId), eq(users.emailNormalized, email.toLowerCase())));
  if (!row) throw new Error(`no user ${email}`);
  return row.id;
}

/** A sign-in in progress in one browser (its cookie jar): the transaction, its workspace, and the client with its PKCE and OIDC values. */
export interface PendingSignIn {
  workspaceId: string;
  tx: string;
  jar: Jar;
  verifier: string;
  state: string;
  nonce: string;
  client: AuthorizeParams;
  /** The workspace hostname the browser signs in at (lib/hostnames); null or absent: the default host. */
  host?: string | null;
}

/** authorize (at `host`, a workspace hostname, or the default host): opens a transaction (the browser's jar gets its cookie); throws when authorize did not ask for a sign-in. */
export async function startSignIn(h: Harness, workspaceId: string, client: AuthorizeParams, jar = new Jar(), host: string | null = null): Promise<PendingSignIn> {
  const { query, verifier, state, nonce } = authorizeQuery(client);
  const res = await call(h, `/t/${workspaceId}/oauth2/authorize?${query}`, { cookie: jar.header(), headers: host === null ? {} : { host } });
  if (res.status !== 303) throw new Error(`authorize answered ${res.status}`);
  jar.take(res);
  const location = new URL(res.headers.get("location")!, PUBLIC_URL);
  if (location.pathname !== `/t/${workspaceId}/sign-in`) throw new Error(`authorize did not ask for a sign-in: ${location.href}`);
  return { workspaceId, tx: location.searchParams.get("tx")!, jar, verifier, state, nonce, client, host };
}

/** What the sign-in page would show now (like the page, it issues the step's WebAuthn challenge). */
export async function viewOf(h: Harness, s: PendingSignIn): Promise<StepView> {
  const view = await signInView(await workspaceContext(h, s.workspaceId, s.host ?? null), s.tx, s.jar.header());
  if (view.kind !== "step") throw new Error("the sign-in expired");
  return view;
}

/**
 * Posts a step's form as the browser would: with the transaction, the CSRF token (the page's now,
 * unless `csrf` is given) and the jar's cookies; `headers` may carry a client address.
 */
export async function postStep(
  h: Harness,
  s: PendingSignIn,
  path: string,
  fields: Record<string, string> = {},
  options: { headers?: Record<string, string>; csrf?: string } = {},
): Promise<Response> {
  const csrf = options.csrf ?? (await viewOf(h, s)).csrf;
  const res = await call(h, `/t/${s.workspaceId}${path}`, {
    form: { tx: s.tx, csrf, ...fields },
    cookie: s.jar.header(),
    headers: { ...browserAt(s.host ?? null), ...options.headers },
  });
  s.jar.take(res);
  return res;
}

export type Outcome = { to: "page"; error: string | null } | { to: "callback"; url: URL; code: string };

/** Where a step's answer sent the browser: the sign-in page (with its `error`, if any) or the client's callback (with its code). */
export function outcome(res: Response): Outcome {
  if (res.status !== 303) throw new Error(`step answered ${res.status}`);
  const url = new URL(res.headers.get("location")!, PUBLIC_URL);
  if (url.origin !== PUBLIC_URL) return { to: "callback", url, code: url.searchParams.get("code")! };
  if (url.pathname.endsWith("/sign-in")) return { to: "page", error: url.searchParams.get("error") };
  throw new Error(`step went to ${url.href}`);
}

/** The password step's form, on a sign-in already started. */
export function postPassword(h: Harness, s: PendingSignIn, email: string, password: string): Promise<Response> {
  return postStep(h, s, "/sign-in/password", { email, password });
}

/** authorize, then the password: the sign-in stands at whatever step the policy asks next (throws if it does not). */
export async function passwordStep(h: Harness, workspaceId: string, p: AuthorizeParams & { email: string; password: string }, jar = new Jar()): Promise<PendingSignIn> {
  const s = await startSignIn(h, workspaceId, p, jar);
  const o = outcome(await postPassword(h, s, p.email, p.password));
  if (o.to !== "page" || o.error) throw new Error(`password step: ${o.to === "page" ? o.error : "completed"}`);
  return s;
}
