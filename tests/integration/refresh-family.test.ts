import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { accessTokens, auditEvents, clients, grants, refreshTokens } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import { basic, call, createHarness, exchangeCode, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, API, SPA, WEB, standardWorkspace } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("family");
const DAY = 24 * 3600_000;
const HOUR = 3600_000;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

async function tokens(scope = "openid email", resource?: string) {
  const r = await signIn(h, ws, { ...SPA, ...ADA, scope, resource });
  const body = await (await exchangeCode(h, ws, { code: r.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r.verifier, client_id: SPA.client_id })).json();
  return { ...body, jar: r.jar };
}
const refresh = (rt: string, extra: Record<string, string> = {}) =>
  call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: rt, client_id: SPA.client_id, ...extra } });
const sessionCheck = (at: string) => call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${at}` } });

/** Keeps the hosted session alive (it has its own 12-hour idle limit) by visiting the hosted pages. */
async function touchSession(jar: { header(): string }) {
  const r = await signIn(h, ws, { ...SPA, ...ADA }, jar as never);
  expect(r.callback.searchParams.get("code")).toBeTruthy();
}

describe("refresh rotation", () => {
  it("returns a replacement with access token, token_type, expires_in and scope, and no ID token", async () => {
    const t = await tokens();
    const res = await refresh(t.refresh_token);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body.token_type).toBe("Bearer");
    expect(body.expires_in).toBe(300);
    expect(body.scope).toBe("openid email");
    expect(body.id_token).toBeUndefined();
  });

  it("narrows only the new access token with scope; the family ceiling stays", async () => {
    const t = await tokens("openid email read:things", API);
    expect(t.scope).toBe("openid email read:things");
    const narrowed = await (await refresh(t.refresh_token, { scope: "openid" })).json();
    expect(narrowed.scope).toBe("openid");
    const wide = await (await refresh(narrowed.refresh_token)).json();
    expect(wide.scope).toBe("openid email read:things");
  });

  it("refuses a scope beyond the grant with invalid_scope", async () => {
    const t = await tokens("openid");
    const res = await refresh(t.refresh_token, { scope: "openid email" });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_scope");
  });

  it("refuses to switch resource (the parameter is not accepted)", async () => {
    const t = await tokens("openid read:things", API);
    const res = await refresh(t.refresh_token, { resource: "https://other.example.test" });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_request");
  });

  it("refuses another client's refresh token without spending it", async () => {
    const t = await tokens();
    const res = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: t.refresh_token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });
    expect(await res.json()).toEqual({ error: "invalid_grant", error_description: "The refresh token was issued to another client" });
    expect((await refresh(t.refresh_token)).status).toBe(200);
  });

  it("revokes the whole family on reuse and records a possible token theft", async () => {
    const t = await tokens();
    const next = await (await refresh(t.refresh_token)).json();
    const reuse = await refresh(t.refresh_token);
    expect(reuse.status).toBe(400);
    expect((await reuse.json()).error).toBe("invalid_grant");
    expect((await sessionCheck(next.access_token)).status).toBe(401);
    expect((await sessionCheck(t.access_token)).status).toBe(401);
    expect((await refresh(next.refresh_token)).status).toBe(400);
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "refresh.reuse_detected")));
    expect(events.length).toBeGreaterThan(0);
    expect(events[0].flagged).toBe("possible_token_theft");
    expect(events[0].clientId).toBe(SPA.client_id);
    expect(events[0].subject).toBeTruthy();
  });

  it("gives exactly one success to 20 parallel refreshes with the same token, and revokes the family", async () => {
    const t = await tokens();
    const results = await Promise.all(Array.from({ length: 20 }, () => refresh(t.refresh_token)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s >= 500)).toHaveLength(0);
    const failures = await Promise.all(results.filter((r) => r.status !== 200).map((r) => r.json()));
    expect(failures.every((f) => f.error === "invalid_grant")).toBe(true);
    const winner = await results.find((r) => r.status === 200)!.json();
    // Never two live successors: the family ends revoked, so the winner's successor is dead too.
    expect((await refresh(winner.refresh_token)).status).toBe(400);
    const [presented] = await h.service.db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, sha256Hex(t.refresh_token)));
    const [family] = await h.service.db.select().from(grants).where(eq(grants.id, presented.grantId));
    expect(family.revokeReason).toBe("refresh_token_reuse");
    // Exactly one rotation wrote anything: one successor, one access token beside the code exchange's.
    expect(await h.service.db.select().from(refreshTokens).where(eq(refreshTokens.grantId, family.id))).toHaveLength(2);
    expect(await h.service.db.select().from(accessTokens).where(eq(accessTokens.grantId, family.id))).toHaveLength(2);
    expect(presented).toMatchObject({ state: "superseded", replacedByHash: sha256Hex(winner.refresh_token) });
  });
});

describe("family limits", () => {
  it("ends after 7 days without use", async () => {
    const t = await tokens();
    // Only the family's own bound may fail here: make the hosted session (12 h idle, 7 days absolute) outlive it.
    const { hostedSessions } = await import("../../db/schema");
    const far = new Date(h.clock.now().getTime() + 60 * DAY);
    await h.service.db.update(hostedSessions).set({ idleExpiresAt: far, absoluteExpiresAt: far }).where(eq(hostedSessions.workspaceId, ws));
    h.clock.advance(7 * DAY - 1000);
    const inside = await refresh(t.refresh_token); // just inside 7 days: used, so the bound slides
    expect(inside.status).toBe(200);
    const rt = (await inside.json()).refresh_token;
    h.clock.advance(7 * DAY + 1000);
    const res = await refresh(rt);
    expect(await res.json()).toEqual({ error: "invalid_grant", error_description: "The refresh token has expired" });
  });

  it("keeps working while used within 7 days, and the hosted session bounds it (7 days absolute)", async () => {
    const t = await tokens();
    let rt = t.refresh_token;
    // Every 11 hours the user visits the hosted pages (12 h idle) and the client refreshes, up to 165 hours.
    for (let i = 0; i < 15; i++) {
      h.clock.advance(11 * HOUR);
      await touchSession(t.jar);
      const res = await refresh(rt);
      expect(res.status).toBe(200);
      rt = (await res.json()).refresh_token;
    }
    // Past the hosted session's absolute limit (168 hours), the family used 4 hours ago may not outlive it.
    h.clock.advance(4 * HOUR);
    expect(await (await refresh(rt)).json()).toEqual({
      error: "invalid_grant",
      error_description: "The session or authorization behind this refresh token has ended",
    });
  });

  it("ends when the hosted session ends (12 hours idle), before any family maximum", async () => {
    const t = await tokens();
    h.clock.advance(12 * HOUR + 1000);
    expect(await (await refresh(t.refresh_token)).json()).toEqual({
      error: "invalid_grant",
      error_description: "The session or authorization behind this refresh token has ended",
    });
  });

  it("ends at 30 days absolute even if used and the session were alive", async () => {
    const t = await tokens();
    const [family] = await h.service.db.select().from(grants).where(eq(grants.workspaceId, ws)).orderBy(grants.createdAt);
    void family;
    // Make the session outlive 30 days artificially so only the family's absolute bound can fail.
    const { hostedSessions } = await import("../../db/schema");
    const far = new Date(h.clock.now().getTime() + 60 * DAY);
    await h.service.db.update(hostedSessions).set({ idleExpiresAt: far, absoluteExpiresAt: far }).where(eq(hostedSessions.workspaceId, ws));
    let rt: string = t.refresh_token;
    for (let i = 0; i < 4; i++) {
      h.clock.advance(6 * DAY);
      const res = await refresh(rt);
      if (res.status !== 200) throw new Error(`day ${(i + 1) * 6}: ${await res.text()}`);
      rt = (await res.json()).refresh_token;
    }
    h.clock.advance(6 * DAY - 1000);
    const inside = await refresh(rt); // just inside 30 days
    expect(inside.status).toBe(200);
    rt = (await inside.json()).refresh_token;
    h.clock.advance(2000); // past 30 days since creation, though used 2 seconds ago
    const past = await (await refresh(rt)).json();
    expect(past).toEqual({ error: "invalid_grant", error_description: "The refresh token has expired" });
  });

  it("ends when the client is disabled", async () => {
    const t = await tokens();
    await h.service.db.update(clients).set({ active: false }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, SPA.client_id)));
    try {
      const res = await refresh(t.refresh_token);
      expect(res.status).toBe(401);
    } finally {
      await h.service.db.update(clients).set({ active: true }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, SPA.client_id)));
    }
  });
});
