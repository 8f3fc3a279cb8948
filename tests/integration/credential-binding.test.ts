import { beforeAll, describe, expect, it } from "vitest";
import { basic, call, createHarness, exchangeCode, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, WEB, standardWorkspace } from "../helpers/fixtures";
import { createClientSecret, revokeClientSecret, rotateClientSecret } from "../../lib/clients/secrets";

let h: Harness;
const HOUR = 3600_000;

beforeAll(async () => {
  h = await createHarness();
});

/** A fresh workspace per case: secret changes must not leak between them. */
async function signedIn() {
  const ws = uniqueWorkspaceId("cred");
  await seed(h, standardWorkspace(ws));
  const r = await signIn(h, ws, { ...WEB, ...ADA });
  const res = await exchangeCode(h, ws, { code: r.callback.searchParams.get("code")!, redirect_uri: WEB.redirect_uri, verifier: r.verifier, authorization: basic(WEB.client_id, WEB.secret) });
  expect(res.status).toBe(200);
  return { ws, tokens: await res.json() };
}

const refresh = (ws: string, refreshToken: string, secret: string) =>
  call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: refreshToken }, headers: { authorization: basic(WEB.client_id, secret) } });

describe("human authorizations and the client's secrets", () => {
  it("survive the old secret merely expiring after a rotation with overlap", async () => {
    const { ws, tokens } = await signedIn();
    const next = await rotateClientSecret(h.service.db, { workspaceId: ws, clientId: WEB.client_id, overlapHours: 2, clock: h.clock });
    h.clock.advance(3 * HOUR); // the old secret has expired; the session (12 h idle) is alive
    expect((await refresh(ws, tokens.refresh_token, WEB.secret)).status).toBe(401);
    const res = await refresh(ws, tokens.refresh_token, next.secret);
    expect(res.status).toBe(200);
  });

  it("end when the secret they were last used with is explicitly revoked", async () => {
    const { ws, tokens } = await signedIn();
    const other = await createClientSecret(h.service.db, { workspaceId: ws, clientId: WEB.client_id, clock: h.clock });
    const list = await import("../../lib/clients/secrets").then((m) => m.listClientSecrets(h.service.db, { workspaceId: ws, clientId: WEB.client_id, clock: h.clock }));
    const original = list.find((s) => s.id !== other.id)!;
    const check = () => call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect((await check()).status).toBe(200);
    await revokeClientSecret(h.service.db, { workspaceId: ws, clientId: WEB.client_id, secretId: original.id, clock: h.clock });
    // At once, not when the access token expires.
    expect((await check()).status).toBe(401);
    const res = await refresh(ws, tokens.refresh_token, other.secret);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid_grant", error_description: "The client credential behind this authorization was revoked" });
  });

  it("are inactive at introspection, refresh token included, once that secret is explicitly revoked: introspection never calls active what the token endpoint refuses", async () => {
    const { ws, tokens } = await signedIn();
    const other = await createClientSecret(h.service.db, { workspaceId: ws, clientId: WEB.client_id, clock: h.clock });
    const introspect = async (token: string) =>
      (await call(h, `/t/${ws}/oauth2/introspect`, { form: { token }, headers: { authorization: basic(WEB.client_id, other.secret) } })).json();
    expect((await introspect(tokens.refresh_token)).active).toBe(true);
    expect((await introspect(tokens.access_token)).active).toBe(true);
    const list = await import("../../lib/clients/secrets").then((m) => m.listClientSecrets(h.service.db, { workspaceId: ws, clientId: WEB.client_id, clock: h.clock }));
    await revokeClientSecret(h.service.db, { workspaceId: ws, clientId: WEB.client_id, secretId: list.find((s) => s.id !== other.id)!.id, clock: h.clock });
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect(await introspect(tokens.refresh_token)).toEqual({ active: false });
    // What the token endpoint does with the same refresh token (without spending it here: introspection first).
    expect((await refresh(ws, tokens.refresh_token, other.secret)).status).toBe(400);
  });

  it("end on immediate replacement of the secret", async () => {
    const { ws, tokens } = await signedIn();
    const next = await rotateClientSecret(h.service.db, { workspaceId: ws, clientId: WEB.client_id, overlapHours: 0, clock: h.clock });
    const res = await refresh(ws, tokens.refresh_token, next.secret);
    expect(await res.json()).toEqual({ error: "invalid_grant", error_description: "The client credential behind this authorization was revoked" });
  });

  it("follow the secret in use: after a refresh with the new secret, revoking the old one changes nothing", async () => {
    const { ws, tokens } = await signedIn();
    const next = await rotateClientSecret(h.service.db, { workspaceId: ws, clientId: WEB.client_id, overlapHours: 24, clock: h.clock });
    const rotated = await refresh(ws, tokens.refresh_token, next.secret);
    expect(rotated.status).toBe(200);
    const list = await import("../../lib/clients/secrets").then((m) => m.listClientSecrets(h.service.db, { workspaceId: ws, clientId: WEB.client_id, clock: h.clock }));
    const old = list.find((s) => s.id !== next.id && s.status === "active")!;
    await revokeClientSecret(h.service.db, { workspaceId: ws, clientId: WEB.client_id, secretId: old.id, clock: h.clock });
    expect((await refresh(ws, (await rotated.json()).refresh_token, next.secret)).status).toBe(200);
  });
});
