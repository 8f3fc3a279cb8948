/**
 * After first-run setup the new operator is signed in, not asked for the email and password they
 * just chose: setup opens a hosted session in the system workspace for exactly that operator, and
 * the console's ordinary sign-in (authorize → code → callback) finds it and comes straight back.
 */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { consoleSessions, hostedSessions } from "../../db/schema";
import { requireOperator } from "../../lib/console/authz";
import { finishConsoleLogin } from "../../lib/console/login";
import { completeSetup, issueSetupToken, startOperatorSession } from "../../lib/console/setup";
import { ensureSystemWorkspace, SYSTEM_WORKSPACE_ID } from "../../lib/console/system";
import { Jar, type Harness } from "../helpers/harness";
import { consoleCallback, cookieValue, createConsoleHarness } from "./console-helpers";

let h: Harness;
const FIRST = { email: "first@setup.test", name: "First", password: "first operator password" };

beforeAll(async () => {
  h = await createConsoleHarness();
  await ensureSystemWorkspace(h.service);
});

describe("signing the first operator in after setup", () => {
  it("without the setup's session a console sign-in asks for the password; with it, it completes without one", async () => {
    const link = (await issueSetupToken(h.service))!;
    const created = await completeSetup(h.service, link.token, FIRST, { ip: "198.51.100.2" });

    // Another browser (no cookie) is sent to the hosted sign-in form.
    const stranger = await consoleCallback(h, FIRST.email, "wrong password for this test", new Jar());
    expect(stranger.callback.pathname).toBe("/t/system/sign-in");

    const session = await startOperatorSession(h.service, created, { ip: "198.51.100.2", userAgent: "test" });
    expect(session).toMatchObject({ name: "lk_session", path: `/t/${SYSTEM_WORKSPACE_ID}` });
    const [row] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, session.value.split(".")[0]));
    expect(row).toMatchObject({ workspaceId: SYSTEM_WORKSPACE_ID, userId: created.userId, amr: ["pwd"] });

    // The setup browser: authorize finds the session and answers with a code, no sign-in form
    // (a wrong password is passed on purpose: it is never asked for).
    const jar = new Jar().take(new Response(null, { headers: { "set-cookie": `${session.name}=${session.value}; Path=${session.path}` } }));
    const { callback, txCookie } = await consoleCallback(h, FIRST.email, "never typed", jar);
    expect(callback.pathname).toBe("/console/auth/callback");
    const done = await finishConsoleLogin(h.service, { url: callback, txCookie });
    const operator = await requireOperator(h.service, cookieValue(done.cookie, "lk_console"));
    expect(operator).toMatchObject({ userId: created.userId, email: FIRST.email });
    // The console session stands on that hosted session, so it ends with it like any other.
    const [consoleSession] = await h.service.db.select().from(consoleSessions).where(eq(consoleSessions.id, operator.sessionId));
    expect(consoleSession.hostedSessionId).toBe(row.id);
  });
});
