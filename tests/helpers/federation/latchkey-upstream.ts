/**
 * A second Latchkey workspace in the same test service acting as an enterprise identity provider:
 * its own users, and a confidential client whose redirect URI is the downstream workspace's
 * `<issuer>/federation/callback`. The downstream reaches it through `Service.fetch`, which
 * `routeFetch` answers in process (the route table) for PUBLIC_URL and hands to the real fetch
 * for everything else (the loopback upstreams).
 */
import { dispatch } from "../../../lib/server/router";
import { signInView } from "../../../lib/sign-in/view";
import { call, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../harness";
import { workspaceContext } from "../factors/sign-in";

export interface UpstreamUser {
  email: string;
  password: string;
  name?: string;
  email_verified?: boolean;
}

export interface LatchkeyUpstream {
  workspaceId: string;
  /** The upstream issuer, as the downstream connection names it. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  users: UpstreamUser[];
}

/** Requests to PUBLIC_URL are answered by the service itself (as the server would); anything else goes out. */
export function routeFetch(h: Harness): void {
  h.service.fetch = async (input, init) => {
    const request = new Request(input, init);
    if (new URL(request.url).origin !== PUBLIC_URL) return globalThis.fetch(request);
    return (await dispatch(request, h.service)) ?? new Response("not found", { status: 404 });
  };
}

/** Seeds the upstream workspace; its only client may redirect to the downstream's callback. */
export async function createLatchkeyUpstream(h: Harness, downstreamWorkspaceId: string, users: UpstreamUser[]): Promise<LatchkeyUpstream> {
  const workspaceId = uniqueWorkspaceId("idp");
  const clientId = "downstream-sso";
  const clientSecret = `idp-secret-${uniqueWorkspaceId("x")}-0123456789abcdef`;
  await seed(h, {
    id: workspaceId,
    name: "Upstream identity provider",
    applications: [
      {
        client_id: clientId,
        name: "Downstream single sign-on",
        type: "WEB_CONFIDENTIAL",
        redirect_uris: [`${PUBLIC_URL}/t/${downstreamWorkspaceId}/federation/callback`],
        identity_scopes: ["openid", "email", "profile"],
        secret: clientSecret,
      },
    ],
    apis: [],
    api_grants: [],
    roles: [],
    users: users.map((u) => ({ email: u.email, password: u.password, name: u.name, email_verified: u.email_verified ?? true })),
  });
  routeFetch(h);
  return { workspaceId, issuer: `${PUBLIC_URL}/t/${workspaceId}`, clientId, clientSecret, users };
}

/**
 * Plays the browser at the upstream: follows the authorization URL the downstream redirected to,
 * signs `user` in with the upstream's hosted password step (with the upstream's own cookies in
 * `jar`; a live upstream session there is reused without a form), and returns the URL the upstream
 * redirects back to (the downstream's callback).
 */
export async function signInUpstream(h: Harness, upstream: LatchkeyUpstream, authorizationUrl: URL | string, user: { email: string; password: string }, jar = new Jar()): Promise<URL> {
  const url = new URL(authorizationUrl);
  if (url.origin !== PUBLIC_URL || !url.pathname.startsWith(`/t/${upstream.workspaceId}/`)) throw new Error(`not the upstream's authorization URL: ${url.href}`);
  const authorize = await call(h, url.pathname + url.search, { cookie: jar.header() });
  jar.take(authorize);
  if (authorize.status !== 303) throw new Error(`the upstream's authorize answered ${authorize.status}: ${await authorize.text()}`);
  const next = new URL(authorize.headers.get("location")!, PUBLIC_URL);
  if (next.pathname !== `/t/${upstream.workspaceId}/sign-in`) return next;
  const tx = next.searchParams.get("tx")!;
  const view = await signInView(await workspaceContext(h, upstream.workspaceId), tx, jar.header());
  if (view.kind !== "step") throw new Error("the upstream sign-in expired");
  const post = await call(h, `/t/${upstream.workspaceId}/sign-in/password`, {
    form: { tx, csrf: view.csrf, email: user.email, password: user.password },
    cookie: jar.header(),
    headers: { origin: PUBLIC_URL },
  });
  jar.take(post);
  if (post.status !== 303) throw new Error(`the upstream's password step answered ${post.status}`);
  const back = new URL(post.headers.get("location")!, PUBLIC_URL);
  if (back.pathname.startsWith(`/t/${upstream.workspaceId}/`)) throw new Error(`the upstream sign-in did not complete: ${back.href}`);
  return back;
}
