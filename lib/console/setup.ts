/**
 * First run: while no operator exists, each server start issues a one-time setup token (its
 * SHA-256 kept in service_settings, valid for an hour) and prints `/console/setup?token=…`. The
 * setup page creates the first operator, owner of every workspace and installation operator
 * (lib/operators/installation.ts), and consumes the token. Once
 * an operator exists, setup refuses. The new operator is then signed in (`startOperatorSession`)
 * rather than asked for the email and password they just chose.
 */
import { and, eq, ne, sql } from "drizzle-orm";
import { z } from "zod";
import { operatorMemberships, serviceSettings, users, workspaces } from "../../db/schema";
import type { Database } from "../../db/client";
import { recordAudit } from "../audit/events";
import { evidenceFor } from "../authn/evidence";
import { createHostedSession, SESSION_ABSOLUTE_MS } from "../authn/hosted-session";
import { screenOperatorPassword } from "../authn/passwords/policy";
import { hashPassword, PASSWORD_MAX_LENGTH } from "../authn/password";
import { addMs, HOUR } from "../clock";
import { newId, randomToken, safeEqual, sha256Hex } from "../crypto";
import { contextFor } from "../server/router";
import type { Service } from "../service";
import { createOperatorAccount, OPERATOR_PASSWORD_MIN_LENGTH } from "../operators/accounts";
import { SYSTEM_WORKSPACE_ID } from "./system";
import { email } from "./forms";
import { EMAIL_CODE_EVIDENCE } from "../authn/factors/email-code/evidence";
import { PASSWORD_EVIDENCE } from "../authn/factors/password/evidence";

export const SETUP_TOKEN_TTL_MS = HOUR;
const SETUP_SETTING = "console.setup_token";
/** An explicitly configured token (CONSOLE_SETUP_TOKEN) must still be a strong one. */
const CONFIGURED_TOKEN = /^[A-Za-z0-9_-]{32,128}$/;

export class SetupTokenConfigError extends Error {}

/**
 * The setup token from CONSOLE_SETUP_TOKEN, used instead of a random one only when explicitly
 * set (the e2e suite does, to know the link); otherwise undefined.
 */
export function configuredSetupToken(env: Record<string, string | undefined> = process.env): string | undefined {
  const raw = env.CONSOLE_SETUP_TOKEN;
  if (raw === undefined || raw === "") return undefined;
  if (!CONFIGURED_TOKEN.test(raw)) {
    throw new SetupTokenConfigError("CONSOLE_SETUP_TOKEN must be 32–128 characters of A–Z a–z 0–9 _ - (or unset for a random one)");
  }
  return raw;
}

export async function operatorExists(db: Database): Promise<boolean> {
  const [row] = await db.select({ id: users.id }).from(users).where(eq(users.workspaceId, SYSTEM_WORKSPACE_ID)).limit(1);
  return !!row;
}

interface StoredToken {
  hash: string;
  expiresAt: string;
}

export interface SetupLink {
  token: string;
  url: string;
  expiresAt: Date;
}

/**
 * Issues a fresh setup token while no operator exists (replacing any earlier one); returns null
 * once an operator exists.
 */
export async function issueSetupToken(service: Service, options: { token?: string } = {}): Promise<SetupLink | null> {
  const db = service.db;
  if (await operatorExists(db)) {
    await db.delete(serviceSettings).where(eq(serviceSettings.key, SETUP_SETTING));
    return null;
  }
  const now = service.clock.now();
  const token = options.token ?? randomToken(32);
  const expiresAt = addMs(now, SETUP_TOKEN_TTL_MS);
  const value = JSON.stringify({ hash: sha256Hex(token), expiresAt: expiresAt.toISOString() } satisfies StoredToken);
  await db
    .insert(serviceSettings)
    .values({ key: SETUP_SETTING, value, updatedAt: now })
    .onConflictDoUpdate({ target: serviceSettings.key, set: { value, updatedAt: now } });
  return { token, url: `${service.config.publicUrl}/console/setup?token=${encodeURIComponent(token)}`, expiresAt };
}

export type SetupTokenState = "valid" | "invalid" | "expired" | "done";

async function tokenState(db: Database, token: string, now: Date): Promise<SetupTokenState> {
  if (await operatorExists(db)) return "done";
  if (!token) return "invalid";
  const [setting] = await db.select().from(serviceSettings).where(eq(serviceSettings.key, SETUP_SETTING)).limit(1);
  if (!setting) return "invalid";
  let stored: StoredToken;
  try {
    stored = JSON.parse(setting.value) as StoredToken;
  } catch {
    return "invalid";
  }
  if (!safeEqual(stored.hash, sha256Hex(token))) return "invalid";
  return new Date(stored.expiresAt) > now ? "valid" : "expired";
}

/** What the setup page should show for this token. */
export function checkSetupToken(service: Service, token: string): Promise<SetupTokenState> {
  return tokenState(service.db, token, service.clock.now());
}

export const setupInputSchema = z.object({
  email: email(),
  name: z.string().trim().min(1, "Enter a name").max(200, "Use at most 200 characters"),
  password: z
    .string()
    .min(OPERATOR_PASSWORD_MIN_LENGTH, `Use at least ${OPERATOR_PASSWORD_MIN_LENGTH} characters`)
    .max(PASSWORD_MAX_LENGTH, `Use at most ${PASSWORD_MAX_LENGTH} characters`),
});
export type SetupInput = z.infer<typeof setupInputSchema>;

export class SetupError extends Error {
  constructor(readonly state: Exclude<SetupTokenState, "valid">) {
    super(
      state === "done"
        ? "An operator already exists; setup is closed. Sign in to the console instead."
        : state === "expired"
          ? "This setup link has expired. Restart the server for a new one."
          : "This setup link is not valid. Use the link the server printed at its last start.",
    );
  }
}

/**
 * Creates the first operator (a user of the system workspace, argon2id password) as owner of
 * every workspace and installation operator, and consumes the token. One transaction under a lock: of concurrent attempts
 * exactly one succeeds.
 */
export async function completeSetup(service: Service, token: string, input: SetupInput, meta: { ip?: string | null } = {}): Promise<{ userId: string }> {
  const parsed = setupInputSchema.parse(input);
  // The operators' screening (lib/authn/passwords): a refused password is said beside its field (PasswordRefused).
  await screenOperatorPassword(service, parsed.password, [parsed.email]);
  const passwordHash = await hashPassword(parsed.password);
  return service.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('latchkey:console-setup'))`);
    const now = service.clock.now();
    const state = await tokenState(tx, token, now);
    if (state !== "valid") throw new SetupError(state);
    const userId = await createOperatorAccount(tx, { email: parsed.email, name: parsed.name, passwordHash, now });
    const all = await tx
      .select({ id: workspaces.id })
      .from(workspaces)
      .where(and(ne(workspaces.id, SYSTEM_WORKSPACE_ID), eq(workspaces.system, false)));
    // Owner of every workspace, and of the system workspace: the installation operator (lib/operators/installation.ts).
    const owned = [SYSTEM_WORKSPACE_ID, ...all.map((w) => w.id)];
    await tx.insert(operatorMemberships).values(owned.map((workspaceId) => ({ id: newId(), operatorUserId: userId, workspaceId, role: "owner" as const, createdAt: now })));
    await tx.delete(serviceSettings).where(eq(serviceSettings.key, SETUP_SETTING));
    await recordAudit(tx, {
      workspaceId: SYSTEM_WORKSPACE_ID,
      type: "console.setup.completed",
      actor: userId,
      data: { operator_email: parsed.email, workspaces: all.map((w) => w.id) },
      ip: meta.ip ?? null,
      at: now,
    });
    return { userId };
  });
}

export interface SessionCookie {
  name: string;
  value: string;
  path: string;
  maxAgeSeconds: number;
}

/**
 * Signs the operator that setup just created in, instead of asking for the email and password
 * they typed a moment ago. It opens a hosted session in the system workspace for that operator
 * (evidence: the password, set now), as the hosted sign-in would; the console then signs in
 * through its ordinary authorize → code → callback path, so the console session is bound to a
 * real grant and hosted session and ends with them like any other.
 *
 * Why this and not a pre-filled sign-in form: the setup link is already the stronger proof.
 * Whoever holds it chooses the operator's password, so a second password prompt proves nothing
 * more, and pre-filling would need `login_hint`, which the authorization endpoint refuses. The
 * session goes only to the browser that completed setup (an HttpOnly cookie on the setup
 * action's response), only for the operator created by that call, once.
 */
export async function startOperatorSession(
  service: Service,
  created: { userId: string },
  meta: { ip?: string | null; userAgent?: string | null } = {},
  /** What the person just proved: the password they chose (setup), or a one-time code sent to their address (an operator joining by a code: lib/operators). */
  method: typeof PASSWORD_EVIDENCE.method | typeof EMAIL_CODE_EVIDENCE.method = PASSWORD_EVIDENCE.method,
): Promise<SessionCookie> {
  const ctx = contextFor(service, { id: SYSTEM_WORKSPACE_ID, name: SYSTEM_WORKSPACE_ID });
  const { cookie } = await createHostedSession(ctx, {
    userId: created.userId,
    evidence: [evidenceFor(method, service.clock.now())],
    ip: meta.ip ?? null,
    userAgent: meta.userAgent ?? null,
  });
  const [pair] = cookie.split(";");
  const eq = pair.indexOf("=");
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), path: ctx.basePath, maxAgeSeconds: Math.floor(SESSION_ABSOLUTE_MS / 1000) };
}
