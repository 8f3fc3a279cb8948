/**
 * Several authentication hostnames (lib/hostnames): host resolution, the issuer per hostname, a
 * grant's tokens answered under its own issuer only, sessions and cookies per hostname, pairwise
 * subjects per hostname, and what removing a hostname ends. Hosts are reached through the `Host`
 * header (and `X-Forwarded-Host` behind a trusted proxy), as the listener receives them.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { and, eq } from "drizzle-orm";
import { authorizeQuery, basic, call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, API, M2M, SPA, WEB, standardWorkspace } from "../helpers/fixtures";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { signInView } from "../../lib/sign-in/view";
import {
  addHostname,
  applyHostnameVerification,
  getHostname,
  hostnameTxtRecord,
  HostnameError,
  markHostnameVerifiedByOperator,
  removeHostname,
  verifyHostnameByDns,
} from "../../lib/hostnames/hostnames";
import { forgetHostnames } from "../../lib/hostnames/directory";
import { grants, hostedSessions, workspaceHostnames } from "../../db/schema";

let h: Harness;
const ws = uniqueWorkspaceId("acme");
const other = uniqueWorkspaceId("globex");
const ACME = `login.${ws}.test`;
const ACME_2 = `id.${ws}.test`;
const GLOBEX = `login.${other}.test`;

/** Claims and verifies a hostname as the console does, with the TXT record found. */
async function verified(h: Harness, workspaceId: string, hostname: string): Promise<string> {
  const claim = await addHostname(h.service.db, { workspaceId, hostname, publicUrl: PUBLIC_URL, now: h.clock.now() });
  const result = await applyHostnameVerification(h.service.db, { workspaceId, id: claim.id, now: h.clock.now(), lookup: { ok: true, records: [hostnameTxtRecord(claim).value] } });
  expect(result.verified).toBe(true);
  forgetHostnames(h.service);
  return claim.id;
}

const at = (host: string | null): Record<string, string> => (host === null ? {} : { host });
const originOf = (host: string | null) => (host === null ? PUBLIC_URL : `https://${host}`);

/** authorize → hosted password sign-in → callback, every request to `host` (null: the default host). */
async function signInAt(host: string | null, client: { client_id: string; redirect_uri: string }, jar = new Jar()) {
  const { query, verifier, state } = authorizeQuery(client);
  const authorize = await call(h, `/t/${ws}/oauth2/authorize?${query}`, { cookie: jar.header(), headers: at(host) });
  expect(authorize.status).toBe(303);
  jar.take(authorize);
  const location = new URL(authorize.headers.get("location")!, originOf(host));
  if (location.pathname !== `/t/${ws}/sign-in`) return { callback: location, verifier, state, jar };
  const tx = location.searchParams.get("tx")!;
  const workspace = (await resolveWorkspace(h.service, ws))!;
  const view = await signInView(contextFor(h.service, workspace, host), tx, jar.header());
  if (view.kind !== "step") throw new Error(`the sign-in is ${view.kind}`);
  const post = await call(h, `/t/${ws}/sign-in/password`, {
    form: { tx, csrf: view.csrf, email: ADA.email, password: ADA.password },
    cookie: jar.header(),
    headers: { ...at(host), origin: originOf(host) },
  });
  expect(post.status).toBe(303);
  jar.take(post);
  return { callback: new URL(post.headers.get("location")!), verifier, state, jar, setCookies: [...authorize.headers.getSetCookie(), ...post.headers.getSetCookie()] };
}

async function tokensAt(host: string | null) {
  const signedIn = await signInAt(host, WEB);
  const code = signedIn.callback.searchParams.get("code")!;
  const res = await call(h, `/t/${ws}/oauth2/token`, {
    form: { grant_type: "authorization_code", code, redirect_uri: WEB.redirect_uri, code_verifier: signedIn.verifier },
    headers: { ...at(host), authorization: basic(WEB.client_id, WEB.secret) },
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string; refresh_token: string; id_token: string };
  return { ...body, signedIn };
}

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws);
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  await seed(h, doc);
  await seed(h, standardWorkspace(other));
});

describe("host resolution", () => {
  it("an unknown host, or an unverified hostname, answers every issuer path like an unknown workspace", async () => {
    const unknownWorkspace = await call(h, `/t/no-such-workspace/.well-known/openid-configuration`);
    expect(unknownWorkspace.status).toBe(404);
    const body = await unknownWorkspace.text();
    await addHostname(h.service.db, { workspaceId: ws, hostname: `pending.${ws}.test`, publicUrl: PUBLIC_URL, now: h.clock.now() });
    forgetHostnames(h.service);
    for (const host of ["unknown.example.test", `pending.${ws}.test`, "auth.example.test:8443"]) {
      for (const path of [`/t/${ws}/.well-known/openid-configuration`, `/t/${ws}/.well-known/jwks.json`, `/t/${ws}/oauth2/authorize?client_id=spa`]) {
        const res = await call(h, path, { headers: { host } });
        expect([host, path, res.status, await res.text()]).toEqual([host, path, 404, body]);
      }
    }
    // The default host serves the workspace as before.
    expect((await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: { host: "auth.example.test" } })).status).toBe(200);
  });

  it("a verified hostname serves its own workspace, never another's", async () => {
    await verified(h, ws, ACME);
    await verified(h, other, GLOBEX);
    expect((await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: { host: ACME } })).status).toBe(200);
    const crossed = await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: { host: GLOBEX } });
    expect(crossed.status).toBe(404);
    expect(await crossed.text()).toBe(await (await call(h, `/t/no-such-workspace/.well-known/openid-configuration`)).text());
    expect((await call(h, `/t/${other}/.well-known/openid-configuration`, { headers: { host: ACME } })).status).toBe(404);
  });

  it("a verified hostname belongs to one workspace: another cannot verify it", async () => {
    const claim = await addHostname(h.service.db, { workspaceId: other, hostname: `shared.${ws}.test`, publicUrl: PUBLIC_URL, now: h.clock.now() });
    await verified(h, ws, `shared.${ws}.test`);
    await expect(addHostname(h.service.db, { workspaceId: other, hostname: `shared.${ws}.test`, publicUrl: PUBLIC_URL, now: h.clock.now() })).rejects.toMatchObject({ code: "already_added" });
    await expect(
      applyHostnameVerification(h.service.db, { workspaceId: other, id: claim.id, now: h.clock.now(), lookup: { ok: true, records: [hostnameTxtRecord(claim).value] } }),
    ).rejects.toBeInstanceOf(HostnameError);
    await expect(addHostname(h.service.db, { workspaceId: uniqueWorkspaceId("x"), hostname: `shared.${ws}.test`, publicUrl: PUBLIC_URL, now: h.clock.now() })).rejects.toMatchObject({ code: "taken" });
  });

  it("two workspaces verifying the same hostname at once: exactly one gets it", async () => {
    const name = `race.${ws}.test`;
    const claims = await Promise.all([ws, other].map((workspaceId) => addHostname(h.service.db, { workspaceId, hostname: name, publicUrl: PUBLIC_URL, now: h.clock.now() }).then((c) => ({ workspaceId, c }))));
    const results = await Promise.allSettled(
      claims.map(({ workspaceId, c }) =>
        applyHostnameVerification(h.service.db, { workspaceId, id: c.id, now: h.clock.now(), lookup: { ok: true, records: [hostnameTxtRecord(c).value] } }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: "taken" });
  });

  it("the installation operator's mark becomes a DNS proof when the record appears, and never overwrites one", async () => {
    const claim = await addHostname(h.service.db, { workspaceId: ws, hostname: `marked.${ws}.test`, publicUrl: PUBLIC_URL, now: h.clock.now() });
    expect(await markHostnameVerifiedByOperator(h.service.db, { workspaceId: ws, id: claim.id, now: h.clock.now() })).toMatchObject({
      verified: true,
      changed: true,
      hostname: { verificationMethod: "operator" },
    });
    const found = { ok: true as const, records: [hostnameTxtRecord(claim).value] };
    const upgraded = await applyHostnameVerification(h.service.db, { workspaceId: ws, id: claim.id, now: h.clock.now(), lookup: found });
    expect(upgraded).toMatchObject({ verified: true, changed: true, hostname: { verificationMethod: "dns" } });
    expect(await applyHostnameVerification(h.service.db, { workspaceId: ws, id: claim.id, now: h.clock.now(), lookup: found })).toMatchObject({ verified: true, changed: false });
    expect(await markHostnameVerifiedByOperator(h.service.db, { workspaceId: ws, id: claim.id, now: h.clock.now() })).toMatchObject({
      changed: false,
      hostname: { verificationMethod: "dns" },
    });
  });

  it("a hostname removed, or given another challenge, while DNS is asked is not verified by that answer", async () => {
    const name = `asked.${ws}.test`;
    const first = await addHostname(h.service.db, { workspaceId: ws, hostname: name, publicUrl: PUBLIC_URL, now: h.clock.now() });
    const oldRecord = hostnameTxtRecord(first);
    // Removed and claimed again while the resolver answers with the old claim's record.
    let again: { id: string } | null = null;
    const removing = async (asked: string) => {
      await removeHostname(h.service.db, { workspaceId: ws, id: first.id, now: h.clock.now() });
      again = await addHostname(h.service.db, { workspaceId: ws, hostname: name, publicUrl: PUBLIC_URL, now: h.clock.now() });
      return asked === oldRecord.name ? [[oldRecord.value]] : [];
    };
    await expect(verifyHostnameByDns(h.service.db, { workspaceId: ws, id: first.id, now: h.clock.now(), resolveTxt: removing })).rejects.toMatchObject({ code: "not_found" });
    expect((await getHostname(h.service.db, ws, again!.id))?.verifiedAt).toBeNull();

    // Given another challenge (token) while the resolver answers with the old one's record.
    const claim = (await getHostname(h.service.db, ws, again!.id))!;
    const stale = hostnameTxtRecord(claim);
    const rechallenging = async () => {
      await h.service.db.update(workspaceHostnames).set({ verificationToken: "another-challenge-0123456789" }).where(eq(workspaceHostnames.id, claim.id));
      return [[stale.value]];
    };
    const result = await verifyHostnameByDns(h.service.db, { workspaceId: ws, id: claim.id, now: h.clock.now(), resolveTxt: rechallenging });
    expect(result).toMatchObject({ verified: false, reason: expect.stringContaining("changed") });
    expect((await getHostname(h.service.db, ws, claim.id))?.verifiedAt).toBeNull();
  });

  it("many proofs of one hostname at once record it once", async () => {
    const claim = await addHostname(h.service.db, { workspaceId: ws, hostname: `many.${ws}.test`, publicUrl: PUBLIC_URL, now: h.clock.now() });
    const found = { ok: true as const, records: [hostnameTxtRecord(claim).value] };
    const results = await Promise.all(Array.from({ length: 8 }, () => applyHostnameVerification(h.service.db, { workspaceId: ws, id: claim.id, now: h.clock.now(), lookup: found })));
    expect(results.every((r) => r.verified)).toBe(true);
    expect(results.filter((r) => r.verified && r.changed)).toHaveLength(1);
  });

  it("X-Forwarded-Host names the host only behind a trusted proxy", async () => {
    const forwarded = { host: "auth.example.test", "x-forwarded-host": ACME };
    const direct = await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: forwarded });
    expect(((await direct.json()) as { issuer: string }).issuer).toBe(`${PUBLIC_URL}/t/${ws}`);
    const proxied = await createHarness({ trustProxy: true });
    const res = await call(proxied, `/t/${ws}/.well-known/openid-configuration`, { headers: forwarded });
    expect(((await res.json()) as { issuer: string }).issuer).toBe(`https://${ACME}/t/${ws}`);
  });
});

describe("the issuer per hostname", () => {
  it("discovery, JWKS and every endpoint address are the hostname's", async () => {
    const doc = (await (await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: { host: ACME } })).json()) as Record<string, unknown>;
    const issuer = `https://${ACME}/t/${ws}`;
    expect(doc.issuer).toBe(issuer);
    const addresses = Object.entries(doc).filter(([, v]) => typeof v === "string" && /^https?:/.test(v as string));
    expect(addresses.length).toBeGreaterThan(5);
    for (const [name, value] of addresses) expect([name, (value as string).startsWith(`${issuer}/`) || value === issuer]).toEqual([name, true]);
    expect((await call(h, `/t/${ws}/.well-known/jwks.json`, { headers: { host: ACME } })).status).toBe(200);
  });

  it("the authorization response's iss and the ID token's iss are the hostname's issuer", async () => {
    const { id_token, signedIn } = await tokensAt(ACME);
    expect(signedIn.callback.searchParams.get("iss")).toBe(`https://${ACME}/t/${ws}`);
    expect(decodeJwt(id_token).iss).toBe(`https://${ACME}/t/${ws}`);
    const atDefault = await tokensAt(null);
    expect(atDefault.signedIn.callback.searchParams.get("iss")).toBe(`${PUBLIC_URL}/t/${ws}`);
    expect(decodeJwt(atDefault.id_token).iss).toBe(`${PUBLIC_URL}/t/${ws}`);
  });
});

describe("a grant's tokens are answered under its issuer only", () => {
  it("UserInfo, the session check, introspection and refresh at another hostname of the same workspace refuse them; at their own they work", async () => {
    await verified(h, ws, ACME_2);
    const tokens = await tokensAt(ACME);
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    expect((await call(h, `/t/${ws}/oidc/userinfo`, { headers: { ...bearer, host: ACME } })).status).toBe(200);
    for (const host of [null, ACME_2]) {
      expect((await call(h, `/t/${ws}/oidc/userinfo`, { headers: { ...bearer, ...at(host) } })).status).toBe(401);
      const session = await call(h, `/t/${ws}/oidc/session`, { headers: { ...bearer, ...at(host) } });
      expect(session.status).toBe(401);
      const introspected = await call(h, `/t/${ws}/oauth2/introspect`, { form: { token: tokens.access_token }, headers: { authorization: basic(WEB.client_id, WEB.secret), ...at(host) } });
      expect(await introspected.json()).toEqual({ active: false });
      const refreshIntrospected = await call(h, `/t/${ws}/oauth2/introspect`, { form: { token: tokens.refresh_token }, headers: { authorization: basic(WEB.client_id, WEB.secret), ...at(host) } });
      expect(await refreshIntrospected.json()).toEqual({ active: false });
      const refreshed = await call(h, `/t/${ws}/oauth2/token`, {
        form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token },
        headers: { authorization: basic(WEB.client_id, WEB.secret), ...at(host) },
      });
      expect(refreshed.status).toBe(400);
      expect(((await refreshed.json()) as { error: string }).error).toBe("invalid_grant");
    }
    expect((await call(h, `/t/${ws}/oidc/session`, { headers: { ...bearer, host: ACME } })).status).toBe(200);
    // Presenting it elsewhere was not reuse: the family is intact and rotates at its own hostname.
    const refreshed = await call(h, `/t/${ws}/oauth2/token`, {
      form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token },
      headers: { authorization: basic(WEB.client_id, WEB.secret), host: ACME },
    });
    expect(refreshed.status).toBe(200);
    const introspected = await call(h, `/t/${ws}/oauth2/introspect`, { form: { token: tokens.access_token }, headers: { authorization: basic(WEB.client_id, WEB.secret), host: ACME } });
    expect(((await introspected.json()) as { iss: string }).iss).toBe(`https://${ACME}/t/${ws}`);
  });

  it("a service (client_credentials) token is answered at the hostname it was issued at only, with that hostname's iss", async () => {
    const minted = await call(h, `/t/${ws}/oauth2/token`, {
      form: { grant_type: "client_credentials", resource: API, scope: "read:things" },
      headers: { authorization: basic(M2M.client_id, M2M.secret), host: ACME },
    });
    expect(minted.status).toBe(200);
    const token = ((await minted.json()) as { access_token: string }).access_token;
    const introspect = (host: string | null) =>
      call(h, `/t/${ws}/oauth2/introspect`, { form: { token }, headers: { authorization: basic(M2M.client_id, M2M.secret), ...at(host) } });
    const check = (host: string | null) =>
      call(h, `/t/${ws}/authorization/check`, {
        method: "POST",
        body: JSON.stringify({ resource: API, permission: "read:things", organization_id: null }),
        headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...at(host) },
      });
    const own = (await (await introspect(ACME)).json()) as { active: boolean; iss: string; principal_type: string };
    expect(own).toMatchObject({ active: true, iss: `https://${ACME}/t/${ws}`, principal_type: "workload" });
    expect(await (await check(ACME)).json()).toEqual({ allowed: true });
    for (const host of [null, ACME_2]) {
      expect(await (await introspect(host)).json()).toEqual({ active: false });
      expect((await check(host)).status).toBe(401);
      expect((await call(h, `/t/${ws}/oidc/userinfo`, { headers: { authorization: `Bearer ${token}`, ...at(host) } })).status).toBe(401);
    }
    // Revoked elsewhere it is unknown, so it stays live at its own hostname; revoked there, it ends.
    for (const host of [null, ACME_2]) {
      const revoked = await call(h, `/t/${ws}/oauth2/revoke`, { form: { token }, headers: { authorization: basic(M2M.client_id, M2M.secret), ...at(host) } });
      expect(revoked.status).toBe(200);
    }
    expect(((await (await introspect(ACME)).json()) as { active: boolean }).active).toBe(true);
    await call(h, `/t/${ws}/oauth2/revoke`, { form: { token }, headers: { authorization: basic(M2M.client_id, M2M.secret), host: ACME } });
    expect(await (await introspect(ACME)).json()).toEqual({ active: false });
  });

  it("a service token issued at the default host is unknown at a hostname of the workspace", async () => {
    const minted = await call(h, `/t/${ws}/oauth2/token`, {
      form: { grant_type: "client_credentials", resource: API, scope: "read:things" },
      headers: { authorization: basic(M2M.client_id, M2M.secret) },
    });
    const token = ((await minted.json()) as { access_token: string }).access_token;
    const introspect = (host: string | null) =>
      call(h, `/t/${ws}/oauth2/introspect`, { form: { token }, headers: { authorization: basic(M2M.client_id, M2M.secret), ...at(host) } });
    expect(await (await introspect(null)).json()).toMatchObject({ active: true, iss: `${PUBLIC_URL}/t/${ws}` });
    expect(await (await introspect(ACME)).json()).toEqual({ active: false });
  });

  it("a code issued at one hostname is refused at another", async () => {
    const signedIn = await signInAt(ACME, WEB);
    const res = await call(h, `/t/${ws}/oauth2/token`, {
      form: { grant_type: "authorization_code", code: signedIn.callback.searchParams.get("code")!, redirect_uri: WEB.redirect_uri, code_verifier: signedIn.verifier },
      headers: { authorization: basic(WEB.client_id, WEB.secret) },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
  });
});

describe("browser state per hostname", () => {
  it("cookies are host-only, and a hosted session cookie from one hostname is no session at another", async () => {
    const signedIn = await signInAt(ACME, SPA);
    expect(signedIn.setCookies!.length).toBeGreaterThan(0);
    for (const cookie of signedIn.setCookies!) expect(cookie).not.toMatch(/;\s*domain=/i);
    // The same browser's session at ACME signs in silently there, and not at the default host.
    const again = await call(h, `/t/${ws}/oauth2/authorize?${authorizeQuery(SPA).query}`, { cookie: signedIn.jar.header(), headers: { host: ACME } });
    expect(new URL(again.headers.get("location")!, `https://${ACME}`).pathname).not.toBe(`/t/${ws}/sign-in`);
    const elsewhere = await call(h, `/t/${ws}/oauth2/authorize?${authorizeQuery(SPA).query}`, { cookie: signedIn.jar.header() });
    expect(new URL(elsewhere.headers.get("location")!, PUBLIC_URL).pathname).toBe(`/t/${ws}/sign-in`);
  });
});

describe("the account-security portal per hostname", () => {
  const handoff = (endpoint: string, body: unknown, host: string | null) =>
    call(h, `/t/${ws}/auth/account/${endpoint}?client_id=${WEB.client_id}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { authorization: basic(WEB.client_id, WEB.secret), "content-type": "application/json", ...at(host) },
    });

  it("the handoff's launch_url is at the hostname of the grant's issuer; launched at another hostname, the user's token is refused", async () => {
    expect((await handoff("configuration", { callback_uri: "https://web.example.test/account/handoff", return_uri: "https://web.example.test/settings", version: 0 }, ACME)).status).toBe(200);
    const tokens = await tokensAt(ACME);
    const launched = await handoff("launch", { user_token: tokens.access_token, state: "s".repeat(43) }, ACME);
    expect(launched.status).toBe(200);
    const url = new URL(((await launched.json()) as { launch_url: string }).launch_url);
    expect(url.origin + url.pathname).toBe(`https://${ACME}/t/${ws}/auth/account/handoff`);
    const elsewhere = await handoff("launch", { user_token: tokens.access_token, state: "t".repeat(43) }, null);
    expect(elsewhere.status).toBe(401);
    expect(((await elsewhere.json()) as { error: string }).error).toBe("REAUTHENTICATION_REQUIRED");
  });

  it("the direct link opens the portal with the hostname's session, and asks for a sign-in at another hostname", async () => {
    const signedIn = await signInAt(ACME, WEB);
    const link = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;
    const here = await call(h, link, { cookie: signedIn.jar.header(), headers: { host: ACME } });
    expect(here.status).toBe(303);
    expect(new URL(here.headers.get("location")!, `https://${ACME}`).pathname).toBe(`/t/${ws}/account`);
    const there = await call(h, link, { cookie: signedIn.jar.header() });
    expect(new URL(there.headers.get("location")!, PUBLIC_URL).pathname).toBe(`/t/${ws}/sign-in`);
  });
});

describe("pairwise subjects", () => {
  it("differ per hostname, and stay what they were at the default host after a hostname is added", async () => {
    const fresh = uniqueWorkspaceId("subjects");
    await seed(h, standardWorkspace(fresh));
    const subjectAt = async (host: string | null) => decodeJwt((await tokensAtWorkspace(fresh, host)).id_token).sub;
    const before = await subjectAt(null);
    await verified(h, fresh, `login.${fresh}.test`);
    expect(await subjectAt(null)).toBe(before);
    const there = await subjectAt(`login.${fresh}.test`);
    expect(there).not.toBe(before);
    expect(await subjectAt(`login.${fresh}.test`)).toBe(there);
  });
});

describe("removing a hostname", () => {
  it("ends what it served: the host answers 404, its sessions end and its grants are revoked, and adding it back revives none of them", async () => {
    const name = `gone.${ws}.test`;
    const id = await verified(h, ws, name);
    const tokens = await tokensAt(name);
    const removed = await removeHostname(h.service.db, { workspaceId: ws, id, now: h.clock.now() });
    forgetHostnames(h.service);
    expect(removed).toMatchObject({ sessionsEnded: 1, grantsRevoked: 1 });
    expect((await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: { host: name } })).status).toBe(404);
    await verified(h, ws, name);
    expect((await call(h, `/t/${ws}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}`, host: name } })).status).toBe(401);
    const refreshed = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, headers: { authorization: basic(WEB.client_id, WEB.secret), host: name } });
    expect(refreshed.status).toBe(400);
    const again = await call(h, `/t/${ws}/oauth2/authorize?${authorizeQuery(SPA).query}`, { cookie: tokens.signedIn.jar.header(), headers: { host: name } });
    expect(new URL(again.headers.get("location")!, `https://${name}`).pathname).toBe(`/t/${ws}/sign-in`);
    const [session] = await h.service.db.select({ endReason: hostedSessions.endReason }).from(hostedSessions).where(and(eq(hostedSessions.workspaceId, ws), eq(hostedSessions.hostname, name)));
    expect(session?.endReason).toBe("hostname_removed");
    const [grant] = await h.service.db.select({ revokeReason: grants.revokeReason }).from(grants).where(and(eq(grants.workspaceId, ws), eq(grants.hostname, name)));
    expect(grant?.revokeReason).toBe("hostname_removed");
  });
});

/** `tokensAt` for another workspace of the standard shape. */
async function tokensAtWorkspace(workspaceId: string, host: string | null) {
  const jar = new Jar();
  const { query, verifier } = authorizeQuery(WEB);
  const authorize = await call(h, `/t/${workspaceId}/oauth2/authorize?${query}`, { headers: at(host) });
  jar.take(authorize);
  const tx = new URL(authorize.headers.get("location")!, originOf(host)).searchParams.get("tx")!;
  const workspace = (await resolveWorkspace(h.service, workspaceId))!;
  const view = await signInView(contextFor(h.service, workspace, host), tx, jar.header());
  if (view.kind !== "step") throw new Error(`the sign-in is ${view.kind}`);
  const post = await call(h, `/t/${workspaceId}/sign-in/password`, { form: { tx, csrf: view.csrf, email: ADA.email, password: ADA.password }, cookie: jar.header(), headers: { ...at(host), origin: originOf(host) } });
  const code = new URL(post.headers.get("location")!).searchParams.get("code")!;
  const res = await call(h, `/t/${workspaceId}/oauth2/token`, {
    form: { grant_type: "authorization_code", code, redirect_uri: WEB.redirect_uri, code_verifier: verifier },
    headers: { ...at(host), authorization: basic(WEB.client_id, WEB.secret) },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { id_token: string };
}
