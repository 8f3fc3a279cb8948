/** Console test helpers: operators, and console sign-in through the real authorize → hosted sign-in → callback flow. */
import { eq } from "drizzle-orm";
import { inject } from "vitest";
import { openDatabase, runMigrations } from "../../db/client";
import { operatorMemberships, users } from "../../db/schema";
import { createService } from "../../lib/service";
import { hashPassword } from "../../lib/authn/password";
import { signInView } from "../../lib/sign-in/view";
import type { ZodType } from "zod";
import type { OperatorRole } from "../../lib/console/authz";
import { runOperation, type Operation } from "../../lib/console/operation";
import { operations } from "../../lib/console/registry";
import { finishConsoleLogin, startConsoleLogin } from "../../lib/console/login";
import { SYSTEM_WORKSPACE_ID } from "../../lib/console/system";
import { newId } from "../../lib/crypto";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { call, createHarness, Jar, PUBLIC_URL, type Harness } from "../helpers/harness";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { openFreshEmbeddedDatabase, tracked } from "../setup/test-database";

export const OPERATOR_PASSWORD = "operator password 0123";


/**
 * A harness whose database no other test file sees. Operators (users of the service-wide system
 * workspace) exist per database, and console-authority.test.ts tests the setup that runs while
 * none exists; every other file of the run (PostgreSQL) or of the process (embedded) shares its
 * database, so a file that signs operators in uses one of its own.
 */
export async function createConsoleHarness(overrides: Parameters<typeof createHarness>[0] = {}): Promise<Harness> {
  const h = await createHarness(overrides);
  const runUrl = inject("databaseUrl");
  if (!runUrl) {
    const own = await openFreshEmbeddedDatabase();
    return { service: createService(own.db, h.service.config, h.clock), clock: h.clock, handle: own };
  }
  const name = freshDatabaseName("latchkey_console");
  const databaseUrl = await createDatabase(runUrl, name);
  let opened;
  try {
    opened = await openDatabase({ databaseUrl, poolSize: 4 });
  } catch (error) {
    await dropDatabase(runUrl, name);
    throw error;
  }
  const pool = opened;
  // Closed, and its database dropped, after the test file that made it (tests/setup/per-file.ts),
  // whether its tests passed or not: test files share this module, so a hook of its own would run
  // after the first file only. Dropped even when the pool fails to close (the drop disconnects it).
  // A process ended before its hooks (an interrupted run) leaves it to the run's teardown
  // (tests/setup/database.ts), which drops every database of the run, and scripts/test.mjs checks.
  const handle = tracked({
    ...pool,
    close: async () => {
      try {
        await pool.close();
      } finally {
        await dropDatabase(runUrl, name);
      }
    },
  });
  await runMigrations(handle, databaseUrl);
  return { service: createService(handle.db, h.service.config, h.clock), clock: h.clock, handle };
}

/** Creates an operator (a user of the system workspace) with roles in the given workspaces. */
export async function createOperator(h: Harness, email: string, memberships: Record<string, OperatorRole>): Promise<string> {
  const now = h.clock.now();
  const id = newId();
  await h.service.db.insert(users).values({
    id,
    workspaceId: SYSTEM_WORKSPACE_ID,
    email,
    emailNormalized: email.toLowerCase(),
    emailVerified: true,
    name: email.split("@")[0],
    passwordHash: await hashPassword(OPERATOR_PASSWORD),
    status: "active",
    createdAt: now,
    updatedAt: now,
  });
  for (const [workspaceId, role] of Object.entries(memberships)) {
    await h.service.db.insert(operatorMemberships).values({ id: newId(), operatorUserId: id, workspaceId, role, createdAt: now });
  }
  return id;
}

export async function operatorId(h: Harness, email: string): Promise<string> {
  const [row] = await h.service.db.select({ id: users.id }).from(users).where(eq(users.emailNormalized, email.toLowerCase()));
  return row.id;
}

export interface ConsoleLogin {
  /** The `lk_console` cookie value. */
  token: string;
  /** Browser cookies on the authentication host (the hosted session). */
  jar: Jar;
  callback: URL;
  txCookie: string;
}

/** The value of `name` in a Set-Cookie string. */
export function cookieValue(setCookie: string, name: string): string {
  const [pair] = setCookie.split(";");
  const eq = pair.indexOf("=");
  if (pair.slice(0, eq) !== name) throw new Error(`expected cookie ${name}, got ${pair}`);
  return pair.slice(eq + 1);
}

/** Runs the console's start route, the system workspace's authorize and hosted sign-in; returns the callback. */
export async function consoleCallback(h: Harness, email: string, password = OPERATOR_PASSWORD, jar = new Jar()): Promise<{ callback: URL; txCookie: string; jar: Jar }> {
  const start = await startConsoleLogin(h.service, "/console");
  const txCookie = cookieValue(start.cookie, "lk_console_tx");
  const authorizeUrl = new URL(start.location);
  const authorize = await call(h, authorizeUrl.pathname + authorizeUrl.search, { cookie: jar.header() });
  if (authorize.status !== 303) throw new Error(`authorize answered ${authorize.status}: ${await authorize.text()}`);
  jar.take(authorize);
  let location = new URL(authorize.headers.get("location")!, PUBLIC_URL);
  if (location.pathname === `/t/${SYSTEM_WORKSPACE_ID}/sign-in`) {
    const tx = location.searchParams.get("tx")!;
    const workspace = (await resolveWorkspace(h.service, SYSTEM_WORKSPACE_ID))!;
    const view = await signInView(contextFor(h.service, workspace), tx, jar.header());
    if (view.kind !== "step") throw new Error("sign-in transaction expired");
    const post = await call(h, `/t/${SYSTEM_WORKSPACE_ID}/sign-in/password`, {
      form: { tx, csrf: view.csrf, email, password },
      cookie: jar.header(),
      headers: { origin: PUBLIC_URL },
    });
    if (post.status !== 303) throw new Error(`sign-in answered ${post.status}`);
    jar.take(post);
    location = new URL(post.headers.get("location")!, PUBLIC_URL);
  }
  return { callback: location, txCookie, jar };
}

export async function consoleSignIn(h: Harness, email: string, password = OPERATOR_PASSWORD, jar = new Jar()): Promise<ConsoleLogin> {
  const { callback, txCookie } = await consoleCallback(h, email, password, jar);
  if (callback.pathname !== "/console/auth/callback") throw new Error(`sign-in ended at ${callback}`);
  const done = await finishConsoleLogin(h.service, { url: callback, txCookie, ip: "203.0.113.7" });
  return { token: cookieValue(done.cookie, "lk_console"), jar, callback, txCookie };
}

/** Runs the registry's operation `name` in `workspaceId` as the operator holding console session `token`. */
export function runRegistered(h: Harness, token: string, workspaceId: string, name: keyof typeof operations, input: Record<string, unknown>) {
  return runOperation(h.service, token, workspaceId, operations[name] as unknown as Operation<ZodType, unknown, unknown>, input);
}

/** An admin and a viewer of `workspaceId` (admin@<domain>, viewer@<domain>), signed in to the console: their session tokens. */
export async function adminAndViewer(h: Harness, workspaceId: string, domain: string): Promise<{ admin: string; viewer: string }> {
  await createOperator(h, `admin@${domain}`, { [workspaceId]: "admin" });
  await createOperator(h, `viewer@${domain}`, { [workspaceId]: "viewer" });
  return { admin: (await consoleSignIn(h, `admin@${domain}`)).token, viewer: (await consoleSignIn(h, `viewer@${domain}`)).token };
}

/**
 * Signs in to the console with an email code (the system workspace offers them when the service
 * can send email): the code is read with `readCode` once it was sent. Returns the callback, as
 * consoleCallback does.
 */
export async function consoleEmailCodeCallback(h: Harness, email: string, readCode: () => Promise<string>, jar = new Jar()): Promise<{ callback: URL; txCookie: string; jar: Jar }> {
  const start = await startConsoleLogin(h.service, "/console");
  const txCookie = cookieValue(start.cookie, "lk_console_tx");
  const authorizeUrl = new URL(start.location);
  const authorize = await call(h, authorizeUrl.pathname + authorizeUrl.search, { cookie: jar.header() });
  if (authorize.status !== 303) throw new Error(`authorize answered ${authorize.status}: ${await authorize.text()}`);
  jar.take(authorize);
  const location = new URL(authorize.headers.get("location")!, PUBLIC_URL);
  const tx = location.searchParams.get("tx")!;
  const workspace = (await resolveWorkspace(h.service, SYSTEM_WORKSPACE_ID))!;
  const csrf = async () => {
    const view = await signInView(contextFor(h.service, workspace), tx, jar.header());
    if (view.kind !== "step") throw new Error("sign-in transaction expired");
    return view.csrf;
  };
  const send = await call(h, `/t/${SYSTEM_WORKSPACE_ID}/sign-in/email`, { form: { tx, csrf: await csrf(), email }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
  if (send.status !== 303) throw new Error(`sending the code answered ${send.status}`);
  jar.take(send);
  const verify = await call(h, `/t/${SYSTEM_WORKSPACE_ID}/sign-in/email/verify`, { form: { tx, csrf: await csrf(), code: await readCode() }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
  if (verify.status !== 303) throw new Error(`the code answered ${verify.status}`);
  jar.take(verify);
  return { callback: new URL(verify.headers.get("location")!, PUBLIC_URL), txCookie, jar };
}
