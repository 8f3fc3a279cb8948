/**
 * The device authorizations' statements: every change of one is a single conditional UPDATE …
 * RETURNING (the poll's bookkeeping, the browser's binding, the user's decision, the consuming
 * poll), so that two requests never both win a step.
 */
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { deviceAuthorizations } from "../../../db/schema";
import { addMs, MINUTE } from "../../clock";
import { newId, sha256Hex } from "../../crypto";
import type { EndpointContext } from "../../http/context";
import { atHostname } from "../../http/context";
import { newUserCode, userCodeHash } from "./user-code";
import { randomToken } from "../../crypto";

/** How long a device code and its user code live (RFC 8628 §3.2 `expires_in`: at most 10 minutes). */
export const DEVICE_CODE_TTL_MS = 10 * MINUTE;
/** The polling interval a device starts with (RFC 8628 §3.2 `interval`), and what each early poll adds (§3.5). */
export const POLL_INTERVAL_SECONDS = 5;
export const SLOW_DOWN_SECONDS = 5;

export type DeviceAuthorization = typeof deviceAuthorizations.$inferSelect;

export const newDeviceCode = () => `lkd_${randomToken(32)}`;

/** A new pending authorization: its codes in clear, once (the row holds their hashes). */
export async function insertDeviceAuthorization(
  ctx: EndpointContext,
  input: { clientPk: string; scope: string[]; apiId: string | null },
): Promise<{ deviceCode: string; userCode: string; expiresAt: Date }> {
  const now = ctx.service.clock.now();
  const expiresAt = addMs(now, DEVICE_CODE_TTL_MS);
  // A user code already taken in the workspace (one in 2^34) is drawn again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const deviceCode = newDeviceCode();
    const userCode = newUserCode();
    const inserted = await ctx.service.db
      .insert(deviceAuthorizations)
      .values({
        id: newId(),
        workspaceId: ctx.workspace.id,
        clientPk: input.clientPk,
        deviceCodeHash: sha256Hex(deviceCode),
        userCodeHash: userCodeHash(ctx.service.config.masterKey, ctx.workspace.id, userCode),
        scope: input.scope,
        apiId: input.apiId,
        intervalSeconds: POLL_INTERVAL_SECONDS,
        hostname: ctx.hostname,
        createdAt: now,
        expiresAt,
      })
      .onConflictDoNothing()
      .returning({ id: deviceAuthorizations.id });
    if (inserted.length === 1) return { deviceCode, userCode, expiresAt };
  }
  throw new Error("no free user code after 5 draws");
}

const mine = (ctx: EndpointContext) => and(eq(deviceAuthorizations.workspaceId, ctx.workspace.id), atHostname(deviceAuthorizations.hostname, ctx.hostname));

/** The one poll that receives the tokens: approved → consumed, for this client, unexpired; the grant id fixed now. */
export async function consumeApproved(ctx: EndpointContext, deviceCode: string, clientPk: string, grantId: string): Promise<DeviceAuthorization | undefined> {
  const now = ctx.service.clock.now();
  const [row] = await ctx.service.db
    .update(deviceAuthorizations)
    .set({ status: "consumed", consumedAt: now, grantId })
    .where(
      and(
        mine(ctx),
        eq(deviceAuthorizations.deviceCodeHash, sha256Hex(deviceCode)),
        eq(deviceAuthorizations.clientPk, clientPk),
        eq(deviceAuthorizations.status, "approved"),
        gt(deviceAuthorizations.expiresAt, now),
      ),
    )
    .returning();
  return row;
}

/**
 * Any other poll: records it and, when it came before the interval since the last one had passed,
 * raises the interval by SLOW_DOWN_SECONDS (RFC 8628 §3.5), in one update whose SET reads the
 * previous values. Returns what the answer depends on; nothing for a code of no authorization of this client.
 */
export async function recordPoll(ctx: EndpointContext, deviceCode: string, clientPk: string) {
  const now = ctx.service.clock.now();
  const early = sql`(${deviceAuthorizations.lastPolledAt} is not null and ${deviceAuthorizations.lastPolledAt} + ${deviceAuthorizations.intervalSeconds} * interval '1 second' > ${now.toISOString()}::timestamptz)`;
  const [row] = await ctx.service.db
    .update(deviceAuthorizations)
    .set({
      lastPolledAt: now,
      lastPollEarly: early,
      intervalSeconds: sql`case when ${early} then ${deviceAuthorizations.intervalSeconds} + ${SLOW_DOWN_SECONDS} else ${deviceAuthorizations.intervalSeconds} end`,
    })
    .where(and(mine(ctx), eq(deviceAuthorizations.deviceCodeHash, sha256Hex(deviceCode)), eq(deviceAuthorizations.clientPk, clientPk)))
    .returning({ status: deviceAuthorizations.status, expiresAt: deviceAuthorizations.expiresAt, early: deviceAuthorizations.lastPollEarly, interval: deviceAuthorizations.intervalSeconds });
  return row;
}

/** The pending, unexpired authorization a (normalized) user code names at this issuer, or undefined. */
export async function findByUserCode(ctx: EndpointContext, code: string): Promise<DeviceAuthorization | undefined> {
  const [row] = await ctx.service.db
    .select()
    .from(deviceAuthorizations)
    .where(
      and(
        mine(ctx),
        eq(deviceAuthorizations.userCodeHash, userCodeHash(ctx.service.config.masterKey, ctx.workspace.id, code)),
        eq(deviceAuthorizations.status, "pending"),
        gt(deviceAuthorizations.expiresAt, ctx.service.clock.now()),
      ),
    )
    .limit(1);
  return row;
}

/** Binds a pending authorization to the browser whose cookie secret hashes to `bindingHash`: the first browser to enter the code, only. */
export async function bindBrowser(ctx: EndpointContext, id: string, bindingHash: string): Promise<boolean> {
  const bound = await ctx.service.db
    .update(deviceAuthorizations)
    .set({ browserBindingHash: bindingHash })
    .where(
      and(
        mine(ctx),
        eq(deviceAuthorizations.id, id),
        isNull(deviceAuthorizations.browserBindingHash),
        eq(deviceAuthorizations.status, "pending"),
        gt(deviceAuthorizations.expiresAt, ctx.service.clock.now()),
      ),
    )
    .returning({ id: deviceAuthorizations.id });
  return bound.length === 1;
}

/** An authorization by id at this issuer, whatever its state (the page reads it with the browser's binding). */
export async function findById(ctx: EndpointContext, id: string): Promise<DeviceAuthorization | undefined> {
  const [row] = await ctx.service.db.select().from(deviceAuthorizations).where(and(mine(ctx), eq(deviceAuthorizations.id, id))).limit(1);
  return row;
}

/**
 * The user's decision, once: pending → approved or denied, only from the browser bound to it,
 * while it lives, recording who decided in which hosted session.
 */
export async function decide(
  ctx: EndpointContext,
  input: { id: string; bindingHash: string; approve: boolean; userId: string; sessionId: string },
): Promise<DeviceAuthorization | undefined> {
  const now = ctx.service.clock.now();
  const [row] = await ctx.service.db
    .update(deviceAuthorizations)
    .set({ status: input.approve ? "approved" : "denied", userId: input.userId, sessionId: input.sessionId, decidedAt: now })
    .where(
      and(
        mine(ctx),
        eq(deviceAuthorizations.id, input.id),
        eq(deviceAuthorizations.status, "pending"),
        eq(deviceAuthorizations.browserBindingHash, input.bindingHash),
        gt(deviceAuthorizations.expiresAt, now),
      ),
    )
    .returning();
  return row;
}
