/**
 * Sessions record evidence (lib/authn/evidence.ts): what sign-in stores, appendEvidence, the
 * migration's back-fill, and the ID token's auth_time/amr/acr derived from the evidence.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { eq, sql } from "drizzle-orm";
import { hostedSessions } from "../../db/schema";
import { appendEvidence, type HostedSession } from "../../lib/authn/hosted-session";
import { ACR, evidenceFor, readEvidence, sessionClaims } from "../../lib/authn/evidence";
import { epochSeconds } from "../../lib/clock";
import type { EndpointContext } from "../../lib/http/context";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { createHarness, exchangeCode, Jar, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, SPA, standardWorkspace } from "../helpers/fixtures";

let h: Harness;
let ctx: EndpointContext;
const ws = uniqueWorkspaceId("evidence");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
  ctx = contextFor(h.service, (await resolveWorkspace(h.service, ws))!);
});

/** Signs Ada in (or reuses the jar's session) and returns the ID token's claims. */
async function idTokenClaims(jar = new Jar()) {
  const r = await signIn(h, ws, { ...SPA, ...ADA, scope: "openid" }, jar);
  const res = await exchangeCode(h, ws, { code: r.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r.verifier, client_id: SPA.client_id });
  expect(res.status).toBe(200);
  return { claims: decodeJwt((await res.json()).id_token), jar: r.jar };
}

async function sessionRow(id: string): Promise<HostedSession> {
  const [row] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, id));
  return row;
}

/** The stored auth_time, amr and acr are exactly the derivations of the stored evidence. */
function expectDerived(row: HostedSession) {
  expect({ authTime: row.authTime, amr: row.amr, acr: row.acr }).toEqual(sessionClaims(readEvidence(row.evidence)));
}

describe("password sign-in", () => {
  it("records one password event; the session's stored values and the ID token are today's", async () => {
    const signedInAt = h.clock.now();
    const { claims } = await idTokenClaims();
    const row = await sessionRow(claims.sid as string);
    expect(row.evidence).toEqual([{ method: "password", amr: ["pwd"], strength: "knowledge", factorId: null, at: signedInAt.toISOString() }]);
    expect({ authTime: row.authTime, amr: row.amr, acr: row.acr }).toEqual({ authTime: signedInAt, amr: ["pwd"], acr: "urn:latchkey:loa:1" });
    expect(claims).toMatchObject({ auth_time: epochSeconds(signedInAt), amr: ["pwd"], acr: "urn:latchkey:loa:1" });
  });
});

describe("appendEvidence", () => {
  it("adds a second factor, re-derives the stored values, and the next ID token carries them", async () => {
    const signedInAt = h.clock.now();
    const first = await idTokenClaims();
    const sid = first.claims.sid as string;
    h.clock.advance(60_000);
    const updated = await appendEvidence(ctx, sid, evidenceFor("totp", h.clock.now(), "totp_1"));
    expect(updated?.amr).toEqual(["pwd", "otp", "mfa"]);
    const row = await sessionRow(sid);
    expect(readEvidence(row.evidence).map((e) => e.method)).toEqual(["password", "totp"]);
    expect({ authTime: row.authTime, amr: row.amr, acr: row.acr }).toEqual({ authTime: signedInAt, amr: ["pwd", "otp", "mfa"], acr: ACR.multiFactor });

    const second = await idTokenClaims(first.jar);
    expect(second.claims.sid).toBe(sid);
    expect(second.claims).toMatchObject({ auth_time: epochSeconds(signedInAt), amr: ["pwd", "otp", "mfa"], acr: "urn:latchkey:loa:2" });
  });

  it("moves auth_time on a re-entered password, not on a second factor", async () => {
    const { claims } = await idTokenClaims();
    const sid = claims.sid as string;
    h.clock.advance(60_000);
    await appendEvidence(ctx, sid, evidenceFor("security_key", h.clock.now(), "key_1"));
    const before = await sessionRow(sid);
    expect(epochSeconds(before.authTime)).toBe(claims.auth_time);
    expect(before.acr).toBe(ACR.phishingResistant);
    h.clock.advance(60_000);
    await appendEvidence(ctx, sid, evidenceFor("password", h.clock.now()));
    const after = await sessionRow(sid);
    expect(after.authTime).toEqual(h.clock.now());
    expect(after.evidence).toHaveLength(2); // the password event updated in place
    expectDerived(after);
  });

  it("keeps every one of concurrent additions", async () => {
    const { claims } = await idTokenClaims();
    const sid = claims.sid as string;
    await Promise.all([
      appendEvidence(ctx, sid, evidenceFor("totp", h.clock.now(), "totp_1")),
      appendEvidence(ctx, sid, evidenceFor("security_key", h.clock.now(), "key_1")),
      appendEvidence(ctx, sid, evidenceFor("recovery_code", h.clock.now())),
    ]);
    const row = await sessionRow(sid);
    expect(readEvidence(row.evidence).map((e) => e.method).sort()).toEqual(["password", "recovery_code", "security_key", "totp"]);
    expectDerived(row);
  });

  it("changes nothing on an ended, expired, unknown or other workspace's session", async () => {
    const { claims } = await idTokenClaims();
    const sid = claims.sid as string;
    const event = evidenceFor("totp", h.clock.now(), "totp_1");

    const otherWs = uniqueWorkspaceId("evidence-other");
    await seed(h, standardWorkspace(otherWs));
    const other = contextFor(h.service, (await resolveWorkspace(h.service, otherWs))!);
    expect(await appendEvidence(other, sid, event)).toBeNull();
    expect(await appendEvidence(ctx, "no-such-session", event)).toBeNull();

    await h.service.db.update(hostedSessions).set({ idleExpiresAt: h.clock.now() }).where(eq(hostedSessions.id, sid));
    expect(await appendEvidence(ctx, sid, event)).toBeNull();
    await h.service.db.update(hostedSessions).set({ idleExpiresAt: new Date(h.clock.now().getTime() + 60_000), endedAt: h.clock.now(), endReason: "logout" }).where(eq(hostedSessions.id, sid));
    expect(await appendEvidence(ctx, sid, event)).toBeNull();

    const row = await sessionRow(sid);
    expect(row.evidence).toHaveLength(1);
    expect(row.amr).toEqual(["pwd"]);
  });
});

describe("the ID token", () => {
  it("derives auth_time, amr and acr from the evidence, not from the stored labels", async () => {
    const first = await idTokenClaims();
    const sid = first.claims.sid as string;
    await h.service.db.update(hostedSessions).set({ amr: ["tampered"], acr: "urn:tampered", authTime: new Date(0) }).where(eq(hostedSessions.id, sid));
    const second = await idTokenClaims(first.jar);
    expect(second.claims.sid).toBe(sid);
    expect(second.claims).toMatchObject({ auth_time: first.claims.auth_time, amr: ["pwd"], acr: "urn:latchkey:loa:1" });
  });
});

describe("migration 0005_session_evidence", () => {
  it("back-fills a session from before evidence with its password event at auth_time", async () => {
    const { claims } = await idTokenClaims();
    const sid = claims.sid as string;
    const recorded = await sessionRow(sid);
    await h.service.db.update(hostedSessions).set({ evidence: [] }).where(eq(hostedSessions.id, sid));

    const migration = readFileSync(new URL("../../db/migrations/0005_session_evidence.sql", import.meta.url), "utf8");
    const backFill = migration.split("--> statement-breakpoint")[1];
    expect(backFill).toMatch(/UPDATE "hosted_sessions"/);
    await h.service.db.execute(sql.raw(backFill));

    const row = await sessionRow(sid);
    expect(row.evidence).toEqual(recorded.evidence);
    expect(readEvidence(row.evidence)).toEqual([evidenceFor("password", row.authTime)]);
    expectDerived(row);
  });
});
