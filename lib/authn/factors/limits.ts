/**
 * The factors' guessing limits, enforced: each factor declares its limits beside itself (a
 * `GuessingLimits` of lib/limits/declarations.ts: per challenge, per account and address, per
 * account overall, what exempts a device), and every flow that verifies it (sign-in, step-up, the
 * portal, sign-up) asks `factorGate` with that declaration, so one factor counts on one set of
 * counters everywhere.
 *
 * What exempts a device from a factor's account ceiling is proof, not presence: a browser is known
 * for a factor only when its hosted session of this account already passed that factor or a
 * stronger one (`knownAfter`). A session made by the password alone proves the password, not
 * possession of an inbox, an authenticator app or a recovery code, so it passes none of their
 * ceilings.
 */
import { and, eq } from "drizzle-orm";
import { hostedSessions, users } from "../../../db/schema";
import { safeEqual, sha256Hex } from "../../crypto";
import { clientAddress } from "../../http/client-address";
import type { EndpointContext } from "../../http/context";
import { guard, type Gate, type GuessingLimits } from "../../limits/declarations";
import { EVIDENCE_METHODS, evidenceFor, STRENGTHS, type EvidenceMethod } from "../evidence";
import { readSessionCookie, SESSION_ABSOLUTE_MS } from "../hosted-session";

export type { Gate, GuessingLimits } from "../../limits/declarations";

const rank = (method: EvidenceMethod) => STRENGTHS.indexOf(evidenceFor(method, new Date(0)).strength);
/** Federated sign-ins are excluded: Latchkey did not see the factors they stand for. */
const local = (method: EvidenceMethod) => method !== "federated" && method !== "federated_mfa";

/**
 * The methods whose passing makes a device known for `method`: the method itself and every local
 * method of a strictly higher strength (lib/authn/evidence.ts). For a possession factor that is
 * the factor and the phishing-resistant ones (a passkey, a security key); for the password, any
 * local factor.
 */
export function knownAfter(method: EvidenceMethod): EvidenceMethod[] {
  return EVIDENCE_METHODS.filter((m) => local(m) && (m === method || rank(m) > rank(method)));
}

/**
 * Whether this attempt may be checked under `limits`, for the account `account` names (an email
 * as typed and normalized, known or not, so an unknown email is counted and answered exactly as a
 * known one; null when the attempt names no account). A refused attempt is not checked and
 * answers like a wrong one.
 */
export function factorGate(ctx: EndpointContext, request: Request, limits: GuessingLimits, account: string | null): Promise<Gate> {
  const { limiter, config } = ctx.service;
  return guard(limiter, config.rateLimits, limits, {
    workspaceId: ctx.workspace.id,
    address: clientAddress(request, config.trustProxy),
    account,
    knownDevice: account === null ? undefined : (after) => knownDevice(ctx, request.headers.get("cookie"), account, after),
  });
}

/**
 * The id of the hosted session whose cookie this browser holds, when that session belongs to the
 * account `email` names in this workspace, began within the cookie's lifetime (ended and expired
 * sessions count) and its evidence holds one of the methods `after`.
 */
async function knownDevice(ctx: EndpointContext, cookieHeader: string | null, email: string, after: readonly string[]): Promise<string | null> {
  const cookie = readSessionCookie(cookieHeader);
  if (!cookie) return null;
  const [row] = await ctx.service.db
    .select({ id: hostedSessions.id, secretHash: hostedSessions.secretHash, createdAt: hostedSessions.createdAt, evidence: hostedSessions.evidence })
    .from(hostedSessions)
    .innerJoin(users, eq(users.id, hostedSessions.userId))
    .where(and(eq(hostedSessions.workspaceId, ctx.workspace.id), eq(hostedSessions.id, cookie.id), eq(users.emailNormalized, email)))
    .limit(1);
  if (!row || !safeEqual(row.secretHash, sha256Hex(cookie.secret))) return null;
  if (ctx.service.clock.now().getTime() - row.createdAt.getTime() >= SESSION_ABSOLUTE_MS) return null;
  return row.evidence.some((e) => after.includes(e.method)) ? row.id : null;
}
