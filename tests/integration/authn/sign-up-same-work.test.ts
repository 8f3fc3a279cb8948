/**
 * POST /sign-up/email does the same work for a registered address as for a new one: the same
 * database statements in the same order, so its answer takes no longer for either (the page
 * already looks the same). Counted, not timed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { users, workspaces } from "../../../db/schema";
import { mailSettled } from "../../../lib/authn/email/transport";
import { SEND_WINDOW_MS } from "../../../lib/authn/factors/email-code";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, BOB, SPA, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postStep, startSignIn, viewOf } from "../../helpers/factors/sign-in";
import { OUTBOX } from "../../helpers/factors/email";
import { statementsDuring } from "../../helpers/statements";

let h: Harness;
const ws = uniqueWorkspaceId("sign-up-work");

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  await seed(h, standardWorkspace(ws));
  await h.service.db.update(workspaces).set({ authPolicy: { signUp: true, firstFactors: ["password", "email_otp"] } }).where(eq(workspaces.id, ws));
  h.service.cache.clear();
});

/** The statements `fn` runs, and any message it sends (the limiter's background writes left out). */
async function statementsOf(fn: () => Promise<void>): Promise<string[]> {
  const { statements } = await statementsDuring(h.service.db, async () => {
    await fn();
    await mailSettled();
  });
  return statements.filter((sql) => !/"rate_limits"/.test(sql));
}

/** "Create an account" with `email`, from a fresh sign-in: the statements it ran. */
async function signUpStatements(email: string): Promise<string[]> {
  h.clock.advance(SEND_WINDOW_MS);
  const s = await startSignIn(h, ws, SPA);
  const { csrf } = await viewOf(h, s);
  return statementsOf(async () => {
    expect(outcome(await postStep(h, s, "/sign-up/email", { email }, { csrf }))).toEqual({ to: "page", error: null });
  });
}

describe("sign-up's first step", () => {
  it("runs the same statements for a registered address as for a new one", async () => {
    const fresh = await signUpStatements("someone-new@example.test");
    const registered = await signUpStatements(ADA.email);
    expect(fresh.length).toBeGreaterThan(0);
    expect(registered).toEqual(fresh);
  });

  it("runs the same statements for a disabled account's address up to its answer", async () => {
    await h.service.db.update(users).set({ status: "disabled" }).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, BOB.email)));
    const fresh = await signUpStatements("another-new@example.test");
    const disabled = await signUpStatements(BOB.email);
    // A disabled account is sent nothing: only the message's own record (after the answer) is missing.
    const outbox = (sql: string) => /"mail_outbox"/.test(sql);
    expect(disabled.filter((sql) => !outbox(sql))).toEqual(fresh.filter((sql) => !outbox(sql)));
  });
});
