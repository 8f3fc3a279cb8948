/**
 * "Email me a code" keeps the typed address like the password form does: a malformed address or
 * a resend too soon comes back with the address in the field, kept on the browser's pending sign-in
 * (never in the URL).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { SPA, standardWorkspace, ADA } from "../../helpers/fixtures";
import { OUTBOX } from "../../helpers/factors/email";
import { outcome, postStep, startSignIn, viewOf } from "../../helpers/factors/sign-in";

let h: Harness;
const ws = uniqueWorkspaceId("hosted-code-address");

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  await seed(h, standardWorkspace(ws));
});

describe("the email-code form keeps the typed address", () => {
  it("after a malformed address: the error, the address shown again, not in the URL", async () => {
    const s = await startSignIn(h, ws, SPA);
    const res = await postStep(h, s, "/sign-in/email", { email: " not-an-address " });
    expect(outcome(res)).toEqual({ to: "page", error: "invalid_email" });
    expect(res.headers.get("location")).not.toContain("not-an-address");
    expect((await viewOf(h, s)).enteredEmail).toBe("not-an-address");
  });

  it("after asking again too soon: the address shown again", async () => {
    const s = await startSignIn(h, ws, SPA);
    expect(outcome(await postStep(h, s, "/sign-in/email", { email: ADA.email }))).toEqual({ to: "page", error: null });
    await postStep(h, s, "/sign-in/email/cancel");
    expect(outcome(await postStep(h, s, "/sign-in/email", { email: ADA.email }))).toEqual({ to: "page", error: "code_resend_wait" });
    expect((await viewOf(h, s)).enteredEmail).toBe(ADA.email);
  });
});
