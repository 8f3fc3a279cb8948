/**
 * The overview's activity per UTC day over 30 days, with an injected clock: sign-ins, failed
 * sign-ins, tokens issued and refresh-reuse alerts, each with a day of zero between days with
 * events, nothing from before the window or from another workspace; and factor adoption.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { recordAudit } from "../../../lib/audit/events";
import { DAY, HOUR } from "../../../lib/clock";
import { activityDays, workspaceActivity, type WorkspaceActivity } from "../../../lib/console/activity";
import { ADA, BOB, SPA, standardWorkspace } from "../../helpers/fixtures";
import { call, createHarness, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { humanTokens } from "../../helpers/lifecycle";
import { giveRecoveryCodes } from "../../helpers/factors/recovery-codes";

let h: Harness;
const W = uniqueWorkspaceId("activity");
const OTHER = uniqueWorkspaceId("activity-other");

const refresh = (token: string) => call(h, `/t/${W}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: token, client_id: SPA.client_id } });
const series = (a: WorkspaceActivity, key: string) => Object.fromEntries(a.series.find((s) => s.key === key)!.days.filter((d) => d.count > 0).map((d) => [d.day, d.count]));

let dayA: string;
let dayB: string;
let dayC: string;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(W));
  await seed(h, standardWorkspace(OTHER));
  // Before the window (31 days before the last day shown): not counted.
  await humanTokens(h, W, SPA, BOB);
  h.clock.advance(31 * DAY);
  dayA = h.clock.now().toISOString().slice(0, 10);
  // Day A: Ada signs in (a session, a token set), refreshes once (a second token set), and one password fails.
  const a = await humanTokens(h, W, SPA, ADA);
  expect((await refresh(a.refresh_token)).status).toBe(200);
  await expect(signIn(h, W, { ...SPA, email: ADA.email, password: "not her password 1" })).rejects.toThrow();
  // The old token used again: reuse detected, flagged, the grant revoked.
  expect((await refresh(a.refresh_token)).status).toBe(400);
  // Another workspace's activity is its own.
  await humanTokens(h, OTHER, SPA, ADA);
  h.clock.advance(DAY);
  dayB = h.clock.now().toISOString().slice(0, 10);
  h.clock.advance(DAY + 2 * HOUR);
  dayC = h.clock.now().toISOString().slice(0, 10);
  // Day C: two sign-ins (new browsers), two failures.
  await humanTokens(h, W, SPA, ADA);
  await humanTokens(h, W, SPA, BOB);
  await expect(signIn(h, W, { ...SPA, email: BOB.email, password: "not his password 1" })).rejects.toThrow();
  await expect(signIn(h, W, { ...SPA, email: "nobody@example.test", password: "not a password 1" })).rejects.toThrow();
  await recordAudit(h.service.db, { workspaceId: OTHER, type: "refresh.reuse_detected", at: h.clock.now() });
  await giveRecoveryCodes(h, W, ADA.email);
});

describe("workspace activity", () => {
  it("covers the 30 UTC days ending today", async () => {
    const a = await workspaceActivity(h.service, W);
    expect(a.to).toBe(dayC);
    expect(a.series.every((s) => s.days.length === 30)).toBe(true);
    expect(activityDays(new Date("2026-03-01T23:59:59Z"))).toEqual(expect.arrayContaining(["2026-01-31", "2026-02-28", "2026-03-01"]));
    expect(activityDays(new Date("2026-03-01T23:59:59Z"))[0]).toBe("2026-01-31");
  });

  it("counts sign-ins per day: hosted sessions created, a day of zero between", async () => {
    const a = await workspaceActivity(h.service, W);
    expect(series(a, "signIns")).toEqual({ [dayA]: 1, [dayC]: 2 });
    expect(a.series.find((s) => s.key === "signIns")!.days.find((d) => d.day === dayB)!.count).toBe(0);
  });

  it("counts failed sign-ins per day", async () => {
    expect(series(await workspaceActivity(h.service, W), "failedSignIns")).toEqual({ [dayA]: 1, [dayC]: 2 });
  });

  it("counts token sets issued per day: code exchanges and refreshes", async () => {
    expect(series(await workspaceActivity(h.service, W), "tokensIssued")).toEqual({ [dayA]: 2, [dayC]: 2 });
  });

  it("counts refresh-token reuse alerts per day, only this workspace's", async () => {
    const a = await workspaceActivity(h.service, W);
    expect(series(a, "reuseAlerts")).toEqual({ [dayA]: 1 });
    expect(a.series.find((s) => s.key === "reuseAlerts")!.total).toBe(1);
    expect(series(await workspaceActivity(h.service, OTHER), "reuseAlerts")).toEqual({ [dayC]: 1 });
  });

  it("reports factor adoption out of all users", async () => {
    expect((await workspaceActivity(h.service, W)).factors).toEqual({ users: 2, passkey: 0, totp: 0, securityKey: 0, recoveryCodes: 1 });
  });
});
