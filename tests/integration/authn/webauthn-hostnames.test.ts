/**
 * Passkeys and security keys per authentication hostname (lib/authn/factors/webauthn/webauthn.ts
 * `relyingParty`), and WebAuthn related origins (lib/hostnames/related-origins.ts): a credential works
 * under the RP ID it was enrolled with; with related origins on, every hostname of the workspace
 * enrols and signs in under its primary hostname's RP ID, which lists their origins in
 * `/.well-known/webauthn`. Hosts are reached through the `Host` header; the software
 * authenticator, like a browser, offers a credential only to a request for its RP ID.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { users, webauthnCredentials } from "../../../db/schema";
import { addHostname, applyHostnameVerification, hostnameTxtRecord, makePrimaryHostname, setRelatedOrigins } from "../../../lib/hostnames/hostnames";
import { forgetHostnames } from "../../../lib/hostnames/directory";
import { createRequestListener } from "../../../lib/server/node-server";
import { ISSUER_ROUTE_CSP } from "../../../lib/http/security-headers";
import { call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { standardWorkspace } from "../../helpers/fixtures";
import { listFactors } from "../../../lib/authn/factors";
import { outcome, postPassword, startSignIn, viewOf, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";
import { postPasskey, postRegistration, postSecondFactorKey, SoftAuthenticator } from "../../helpers/factors/webauthn";

let h: Harness;
const PASSWORD = "a long enough password for tests";
const DEFAULT_HOST = new URL(PUBLIC_URL).hostname;
const failed = { to: "page", error: "webauthn_failed" };

const app = (client_id: string) => ({ client_id, redirect_uri: `https://${client_id}.example.test/callback` });
/** Password, email code and passkey first; a passkey offered after the password. */
const OFFER = app("offer");
/** A second factor required. */
const MFA = app("mfa");

const NAMES = ["enrolled-a", "key-a", "related", "related-key", "before", "before-key", "default"];
const email = (name: string) => `${name}@example.test`;

function workspaceDoc(id: string) {
  const doc = standardWorkspace(id);
  const publicApp = (client: { client_id: string; redirect_uri: string }, auth_policy: object) => ({
    client_id: client.client_id,
    name: `App ${client.client_id}`,
    type: "PUBLIC",
    redirect_uris: [client.redirect_uri],
    identity_scopes: ["openid", "email", "profile"],
    auth_policy,
  });
  doc.applications.push(publicApp(OFFER, { passkey_enrollment: "offer" }), publicApp(MFA, { mfa: "required" }));
  doc.users.push(...NAMES.map((n) => ({ email: email(n), password: PASSWORD, email_verified: true })));
  return doc;
}

/** Claims and verifies a hostname as the console does, with the TXT record found; its id. */
async function verified(workspaceId: string, hostname: string): Promise<string> {
  const claim = await addHostname(h.service.db, { workspaceId, hostname, publicUrl: PUBLIC_URL, now: h.clock.now() });
  const result = await applyHostnameVerification(h.service.db, { workspaceId, id: claim.id, now: h.clock.now(), lookup: { ok: true, records: [hostnameTxtRecord(claim).value] } });
  expect(result.verified).toBe(true);
  forgetHostnames(h.service);
  return claim.id;
}

async function userId(workspaceId: string, name: string): Promise<string> {
  const [row] = await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, workspaceId), eq(users.emailNormalized, email(name))));
  return row.id;
}

async function rpIdsOf(workspaceId: string, name: string): Promise<string[]> {
  const uid = await userId(workspaceId, name);
  const rows = await h.service.db.select({ rpId: webauthnCredentials.rpId }).from(webauthnCredentials).where(and(eq(webauthnCredentials.workspaceId, workspaceId), eq(webauthnCredentials.userId, uid)));
  return rows.map((r) => r.rpId);
}

const origin = (host: string) => `https://${host}`;
const signInAt = (workspaceId: string, client: { client_id: string; redirect_uri: string }, host: string | null) => startSignIn(h, workspaceId, client, new Jar(), host);

/** A password sign-in at `host` that stands at the next step (a passkey offer, a second factor). */
async function afterPassword(workspaceId: string, client: { client_id: string; redirect_uri: string }, name: string, host: string | null): Promise<PendingSignIn> {
  const s = await signInAt(workspaceId, client, host);
  expect(outcome(await postPassword(h, s, email(name), PASSWORD))).toEqual({ to: "page", error: null });
  return s;
}

/** Enrols a passkey through the passkey offer at `host`, with the browser's origin there; the creation options' RP ID. */
async function enrolPasskeyAt(workspaceId: string, name: string, host: string, authenticator: SoftAuthenticator): Promise<string> {
  const s = await afterPassword(workspaceId, OFFER, name, host);
  const view = await viewOf(h, s);
  expect(view.step.kind).toBe("passkey_offer");
  const rpId = JSON.parse(view.webauthn.creation!.passkey!).rp.id as string;
  const { res } = await postRegistration(h, s, authenticator, "passkey", { origin: origin(host) });
  expect(outcome(res).to).toBe("callback");
  return rpId;
}

/** The passkey button's request options at `host`. */
async function passkeyOptionsAt(workspaceId: string, host: string | null) {
  const s = await signInAt(workspaceId, OFFER, host);
  return { s, options: JSON.parse((await viewOf(h, s)).webauthn.options!) as { rpId: string; challenge: string; allowCredentials?: { id: string }[] } };
}

const related = (workspaceId: string) => call(h, "/.well-known/webauthn", { headers: { host: `login.${workspaceId}.test` } });
const notFoundBody = async () => (await call(h, "/t/no-such-workspace/.well-known/openid-configuration")).text();

const servers: http.Server[] = [];

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
});

describe("a credential works at the hostname it was enrolled on", () => {
  const ws = uniqueWorkspaceId("rp");
  const A = `login.${ws}.test`;
  const B = `id.${ws}.test`;

  beforeAll(async () => {
    await seed(h, workspaceDoc(ws));
    await verified(ws, A);
    await verified(ws, B);
  });

  it("a passkey enrolled at A has RP ID A and signs in there; at B it is not offered, and an assertion of it is refused like an unknown one", async () => {
    const authenticator = new SoftAuthenticator({ origin: origin(A) });
    expect(await enrolPasskeyAt(ws, "enrolled-a", A, authenticator)).toBe(A);
    expect(await rpIdsOf(ws, "enrolled-a")).toEqual([A]);
    const [credential] = authenticator.credentials;
    // The portal (and any list of the user's factors) names where it works, wherever it is listed.
    const listed = await listFactors(await workspaceContext(h, ws, B), await userId(ws, "enrolled-a"));
    expect(listed.filter((f) => f.kind === "passkey")).toEqual([expect.objectContaining({ rpId: A })]);

    const atA = await passkeyOptionsAt(ws, A);
    expect(atA.options.rpId).toBe(A);
    expect(outcome(await postPasskey(h, atA.s, authenticator)).to).toBe("callback");

    // At B the browser asks for B's passkeys: this one is not among them.
    const atB = await passkeyOptionsAt(ws, B);
    expect(atB.options.rpId).toBe(B);
    expect(authenticator.has(atB.options)).toBe(false);
    // Presented anyway, signed for A's RP ID (what A's RP would verify) or for B's, from B's origin: refused.
    for (const rpId of [A, B]) {
      const s = (await passkeyOptionsAt(ws, B)).s;
      expect(outcome(await postPasskey(h, s, authenticator, { credential, rpId, origin: origin(B) })), rpId).toEqual(failed);
    }
    // Nor at the default host.
    const atDefault = await passkeyOptionsAt(ws, null);
    expect(atDefault.options.rpId).toBe(DEFAULT_HOST);
    expect(outcome(await postPasskey(h, atDefault.s, authenticator, { credential, rpId: A, origin: PUBLIC_URL }))).toEqual(failed);
    // Still good at A.
    expect(outcome(await postPasskey(h, (await passkeyOptionsAt(ws, A)).s, authenticator)).to).toBe("callback");
  });

  it("as a second factor: a security key enrolled at A is offered and accepted at A only", async () => {
    const authenticator = new SoftAuthenticator({ origin: origin(A) });
    const key = await authenticator.enrol(h, ws, await userId(ws, "key-a"), "security_key", "ES256", A);

    const atB = await afterPassword(ws, MFA, "key-a", B);
    expect((await viewOf(h, atB)).step).toMatchObject({ kind: "second_factor" });
    // No options at B: the user has no key that works there.
    expect((await viewOf(h, atB)).webauthn.options).toBeNull();

    const atA = await afterPassword(ws, MFA, "key-a", A);
    const options = JSON.parse((await viewOf(h, atA)).webauthn.options!);
    expect(options).toMatchObject({ rpId: A, allowCredentials: [{ id: key.id }] });
    expect(outcome(await postSecondFactorKey(h, atA, authenticator)).to).toBe("callback");

    // A key enrolled at the default host as well: B's options still list none of them.
    await authenticator.enrol(h, ws, await userId(ws, "key-a"), "security_key", "ES256", DEFAULT_HOST);
    const againAtB = await afterPassword(ws, MFA, "key-a", B);
    expect((await viewOf(h, againAtB)).webauthn.options).toBeNull();
    const atDefault = await afterPassword(ws, MFA, "key-a", null);
    const defaultOptions = JSON.parse((await viewOf(h, atDefault)).webauthn.options!);
    expect(defaultOptions.rpId).toBe(DEFAULT_HOST);
    expect(defaultOptions.allowCredentials.map((c: { id: string }) => c.id)).not.toContain(key.id);
    // The A key, presented at the default host under A's RP ID: refused.
    expect(outcome(await postSecondFactorKey(h, atDefault, authenticator, { credential: key, rpId: A, origin: PUBLIC_URL }))).toEqual(failed);
  });

  it("related origins off: no hostname serves /.well-known/webauthn", async () => {
    const body = await notFoundBody();
    for (const host of [A, B]) {
      const res = await call(h, "/.well-known/webauthn", { headers: { host } });
      expect([host, res.status, await res.text()]).toEqual([host, 404, body]);
    }
  });
});

describe("WebAuthn related origins", () => {
  const ws = uniqueWorkspaceId("related");
  const A = `login.${ws}.test`;
  const B = `id.${ws}.test`;
  let idA: string;
  // Another workspace with related origins of its own.
  const other = uniqueWorkspaceId("related-other");
  const G = `login.${other}.test`;

  beforeAll(async () => {
    await seed(h, workspaceDoc(ws));
    await seed(h, workspaceDoc(other));
    idA = await verified(ws, A);
    await verified(ws, B);
    // Added, never verified: not listed, not served.
    await addHostname(h.service.db, { workspaceId: ws, hostname: `pending.${ws}.test`, publicUrl: PUBLIC_URL, now: h.clock.now() });
    const idG = await verified(other, G);
    await makePrimaryHostname(h.service.db, { workspaceId: other, id: idG });
    await setRelatedOrigins(h.service.db, { workspaceId: other, on: true, now: h.clock.now() });
  });

  it("on, but no primary hostname: nothing changes, and no document", async () => {
    await setRelatedOrigins(h.service.db, { workspaceId: ws, on: true, now: h.clock.now() });
    expect((await passkeyOptionsAt(ws, B)).options.rpId).toBe(B);
    for (const host of [A, B]) expect((await call(h, "/.well-known/webauthn", { headers: { host } })).status).toBe(404);
    await setRelatedOrigins(h.service.db, { workspaceId: ws, on: false, now: h.clock.now() });
  });

  it("credentials enrolled at B before it is on keep working at B, and only there", async () => {
    const passkey = new SoftAuthenticator({ origin: origin(B) });
    expect(await enrolPasskeyAt(ws, "before", B, passkey)).toBe(B);
    const key = new SoftAuthenticator({ origin: origin(B) });
    const keyCredential = await key.enrol(h, ws, await userId(ws, "before-key"), "security_key", "ES256", B);

    await makePrimaryHostname(h.service.db, { workspaceId: ws, id: idA });
    await setRelatedOrigins(h.service.db, { workspaceId: ws, on: true, now: h.clock.now() });

    // The second factor at B asks under B's RP ID for a user whose keys are all B's.
    const atB = await afterPassword(ws, MFA, "before-key", B);
    expect(JSON.parse((await viewOf(h, atB)).webauthn.options!)).toMatchObject({ rpId: B, allowCredentials: [{ id: keyCredential.id }] });
    expect(outcome(await postSecondFactorKey(h, atB, key)).to).toBe("callback");
    // The B passkey, presented at B: accepted (the passkey button asks for A's, so it is used after the password there).
    const s = (await passkeyOptionsAt(ws, B)).s;
    expect(outcome(await postPasskey(h, s, passkey, { credential: passkey.credentials[0], rpId: B, origin: origin(B) })).to).toBe("callback");
    // At A, neither is offered nor accepted.
    const atA = await afterPassword(ws, MFA, "before-key", A);
    expect((await viewOf(h, atA)).webauthn.options).toBeNull();
    const fromA = (await passkeyOptionsAt(ws, A)).s;
    expect(outcome(await postPasskey(h, fromA, passkey, { credential: passkey.credentials[0], rpId: B, origin: origin(A) }))).toEqual(failed);
  });

  it("on with A primary: a passkey enrolled at B has RP ID A, and signs in at A and at B", async () => {
    const authenticator = new SoftAuthenticator({ origin: origin(B) });
    expect(await enrolPasskeyAt(ws, "related", B, authenticator)).toBe(A);
    expect(await rpIdsOf(ws, "related")).toEqual([A]);

    for (const host of [A, B]) {
      const { s, options } = await passkeyOptionsAt(ws, host);
      expect(options.rpId, host).toBe(A);
      expect(outcome(await postPasskey(h, s, authenticator, { origin: origin(host) })).to, host).toBe("callback");
    }
    // The origin is still the request's, exactly: B's page cannot send A's, nor another's.
    const { s } = await passkeyOptionsAt(ws, B);
    expect(outcome(await postPasskey(h, s, authenticator, { origin: origin(`evil.${ws}.test`) }))).toEqual(failed);
    // The default host keeps its own RP ID: A's passkey does not work there.
    const atDefault = await passkeyOptionsAt(ws, null);
    expect(atDefault.options.rpId).toBe(DEFAULT_HOST);
    expect(authenticator.has(atDefault.options)).toBe(false);
    expect(outcome(await postPasskey(h, atDefault.s, authenticator, { credential: authenticator.credentials[0], rpId: A, origin: PUBLIC_URL }))).toEqual(failed);
  });

  it("as a second factor: a security key enrolled at B under A's RP ID works at A", async () => {
    const authenticator = new SoftAuthenticator({ origin: origin(B) });
    await authenticator.enrol(h, ws, await userId(ws, "related-key"), "security_key", "ES256", A);
    for (const host of [A, B]) {
      const s = await afterPassword(ws, MFA, "related-key", host);
      expect(JSON.parse((await viewOf(h, s)).webauthn.options!).rpId, host).toBe(A);
      expect(outcome(await postSecondFactorKey(h, s, authenticator, { origin: origin(host) })).to, host).toBe("callback");
    }
  });

  it("the primary hostname serves /.well-known/webauthn: every verified hostname's origin, as JSON, cacheable briefly", async () => {
    const res = await related(ws);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    expect(await res.json()).toEqual({ origins: [origin(A), origin(B)] });
    const head = await call(h, "/.well-known/webauthn", { method: "HEAD", headers: { host: A } });
    expect(head.status).toBe(200);
    // The other workspace's primary lists its own hostname only.
    expect(await (await related(other)).json()).toEqual({ origins: [origin(G)] });
  });

  it("nowhere else: another hostname, the default host, an unknown or unverified host; another method is the route table's 405 with Allow", async () => {
    const body = await notFoundBody();
    for (const host of [B, DEFAULT_HOST, `pending.${ws}.test`, "unknown.example.test"]) {
      const res = await call(h, "/.well-known/webauthn", { headers: { host } });
      expect([host, res.status, await res.text()]).toEqual([host, 404, body]);
    }
    expect((await call(h, "/.well-known/webauthn")).status).toBe(404);
    const post = await call(h, "/.well-known/webauthn", { method: "POST", form: {}, headers: { host: A } });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
  });

  it("the production listener answers it the same, without Next", async () => {
    const reachedNext: string[] = [];
    const server = http.createServer(createRequestListener(h.service, PUBLIC_URL, (req, res) => (reachedNext.push(req.url ?? ""), res.writeHead(599).end())));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const get = (host: string, method = "GET") =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port, path: "/.well-known/webauthn", method, headers: { host } }, (res) => {
          let body = "";
          res.on("data", (c) => (body += c));
          res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        });
        req.on("error", reject).end();
      });
    const atA = await get(A);
    expect(atA.status).toBe(200);
    expect(atA.body).toBe(await (await related(ws)).text());
    expect(atA.headers["content-security-policy"]).toBe(ISSUER_ROUTE_CSP);
    expect(atA.headers["cache-control"]).toBe("public, max-age=300");
    expect((await get(A, "HEAD")).status).toBe(200);
    const body = await notFoundBody();
    for (const host of [B, DEFAULT_HOST, "unknown.example.test"]) expect([host, (await get(host)).status, (await get(host)).body]).toEqual([host, 404, body]);
    const post = await get(A, "POST");
    expect([post.status, post.headers.allow]).toEqual([405, "GET, HEAD"]);
    // An unknown host serves nothing, whatever the method.
    expect((await get("unknown.example.test", "POST")).status).toBe(404);
    expect(reachedNext).toEqual([]);
  });

  it("off again: the document is gone, and each hostname is its own RP ID again", async () => {
    await setRelatedOrigins(h.service.db, { workspaceId: ws, on: false, now: h.clock.now() });
    expect((await related(ws)).status).toBe(404);
    expect((await passkeyOptionsAt(ws, B)).options.rpId).toBe(B);
    expect((await passkeyOptionsAt(ws, A)).options.rpId).toBe(A);
    await setRelatedOrigins(h.service.db, { workspaceId: ws, on: true, now: h.clock.now() });
    expect((await related(ws)).status).toBe(200);
  });
});
