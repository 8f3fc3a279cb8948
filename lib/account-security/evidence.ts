/**
 * Verification before sensitive changes in the portal (SPEC "Account-security authentication").
 *
 * - Viewing needs only a live portal session (./portal-session.ts): the source session's authority.
 * - Adding a credential (`"add"`) needs a recent primary verification (password, email code or
 *   passkey, within EVIDENCE_REUSE_MS: ten minutes) plus the user's existing MFA: when the user has
 *   a second factor (an authenticator app, a security key, a passkey) or the policy requires MFA,
 *   the fresh events together must be multi-factor.
 * - Removing a factor (`{ remove: strength }`) or generating recovery codes (the set its factor
 *   shows once, `RECOVERY_CODES_FACTOR.shownOnce`) needs all of that, and a fresh event at least as
 *   strong as the factor removed (recovery codes: as strong as a recovery code, possession), in the order of lib/authn/evidence.ts STRENGTHS.
 *
 * Where the evidence comes from, and what binds it: the events of the hosted session the portal
 * came from (its sign-in, a step-up there), and the events re-verified in the portal, which are
 * stored on the portal session row (never on the hosted session: re-verifying in the portal does not
 * change what the application's tokens say). Portal events count for every portal session of the
 * same user, hosted session and grant, so a new handoff reuses them, within ten minutes of when
 * they happened. A token refresh writes neither list, so it never extends evidence.
 *
 * Verification methods: the local password (the user has one and the application's policy
 * enables it), an email code (the address is verified and the policy enables email codes), an
 * existing passkey. An account with none of them (provider only: it signs in through its
 * organization's identity provider) keeps ordinary access and cannot complete sensitive changes.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import { accountSecurityPortalSessions, users } from "../../db/schema";
import { isMultiFactor, evidenceSince, readEvidence, strengthOf, EVIDENCE_REUSE_MS, STRENGTHS, type Evidence, type EvidenceMethod, type Strength } from "../authn/evidence";
import { emailAvailable } from "../authn/email/transport";
import { enrolledSummary, NOTHING_ENROLLED } from "../authn/factors";
import type { ChallengeBinding } from "../authn/factors/contract";
import {
  BACKUP_KINDS,
  identifiesUser,
  isHeldKind,
  PORTAL_PRIMARY_KINDS,
  roleOf,
  SECOND_FACTOR_KINDS,
  type BackupKind,
  type FactorKind,
  type HeldKind,
  type PortalPrimaryKind,
  type SecondFactorKind,
} from "../authn/factors/registry";
import { effectivePolicy, readPolicy, type AuthPolicy, type EnrolledSummary } from "../authn/policy";
import type { EndpointContext } from "../http/context";
import { workspaces } from "../../db/schema";
import type { PortalSession } from "./portal-session";
import { RECOVERY_CODE_EVIDENCE, RECOVERY_CODES_FACTOR } from "../authn/factors/recovery-codes";

/** What a change needs: adding a credential, removing a factor of a strength, new recovery codes. */
export type EvidenceNeed = "add" | { remove: Strength } | typeof RECOVERY_CODES_FACTOR.shownOnce;

/** A primary verification method the user can use in the portal (a kind's role `portalPrimary`). */
export type PrimaryMethod = PortalPrimaryKind;
/** A further factor the user can add to make the verification multi-factor: a second factor, or a backup beside one. */
export type MfaMethod = SecondFactorKind | BackupKind;

/** Why a change cannot proceed yet, and what the user can do about it. */
export interface VerifyPlan {
  /**
   * `provider_only`: no method this account can verify with (the page says why; no change is possible);
   * `primary`: a primary verification is missing or older than ten minutes;
   * `mfa`: the fresh events are not multi-factor;
   * `stronger`: no fresh event is as strong as the change asks.
   */
  reason: "provider_only" | "primary" | "mfa" | "stronger";
  /** The strength at least one fresh event must have. */
  minStrength: Strength;
  /** The primary methods offered (empty for `provider_only`). */
  primary: PrimaryMethod[];
  /** The further factors that would complete MFA, or reach `minStrength`. */
  mfa: MfaMethod[];
}

export type EvidenceVerdict = { ok: true } | { ok: false; verify: VerifyPlan };

const PRIMARY: readonly EvidenceMethod[] = PORTAL_PRIMARY_KINDS;
const atLeast = (s: Strength, min: Strength) => STRENGTHS.indexOf(s) >= STRENGTHS.indexOf(min);

/** The strength a change needs a fresh event to have. */
export function strengthNeeded(need: EvidenceNeed): Strength {
  if (need === "add") return "knowledge";
  // New recovery codes replace the set: as strong as a recovery code.
  if (need === RECOVERY_CODES_FACTOR.shownOnce) return RECOVERY_CODE_EVIDENCE.strength;
  return need.remove;
}

/** What the account can verify with: the user's methods the policy enables. */
export interface VerifyMethods {
  primary: PrimaryMethod[];
  /** Factors enrolled that can add to a verification. */
  mfa: MfaMethod[];
  /** Whether the user holds a second factor (MFA is then always asked for). */
  hasSecondFactor: boolean;
}

/** `emailUsable`: the address is verified and the server can send mail. */
export function verifyMethods(policy: AuthPolicy, enrolled: EnrolledSummary, emailUsable: boolean): VerifyMethods {
  // The account's own factors: a password, an address that receives codes.
  const own: Readonly<Record<Exclude<FactorKind, HeldKind>, boolean>> = { password: enrolled.hasPassword, email_otp: emailUsable };
  const has = (kind: FactorKind) => (isHeldKind(kind) ? enrolled[kind] > 0 : own[kind]);
  const accepts = (kind: FactorKind) => (policy.firstFactors as readonly FactorKind[]).includes(kind);
  const primary = PORTAL_PRIMARY_KINDS.filter((k) => has(k) && (roleOf(k).portalPrimary === "held" || accepts(k)));
  const second = SECOND_FACTOR_KINDS.filter(has);
  const backups = second.some((k) => !identifiesUser(k)) ? BACKUP_KINDS.filter(has) : [];
  return { primary, mfa: [...second, ...backups], hasSecondFactor: second.length > 0 };
}

/**
 * The rule, pure: whether the fresh `evidence` (already limited to ten minutes) is enough for
 * `need`, for an account with `methods` under `policy`.
 */
export function judgeEvidence(need: EvidenceNeed, policy: AuthPolicy, methods: VerifyMethods, fresh: readonly Evidence[]): EvidenceVerdict {
  const minStrength = strengthNeeded(need);
  const plan = (reason: VerifyPlan["reason"]): EvidenceVerdict => ({ ok: false, verify: { reason, minStrength, primary: [...methods.primary], mfa: [...methods.mfa] } });
  if (methods.primary.length === 0) return plan("provider_only");
  // Only the portal's verification methods count as primary here (a federated sign-in does not).
  if (!fresh.some((e) => PRIMARY.includes(e.method))) return plan("primary");
  if ((methods.hasSecondFactor || policy.mfa === "required") && !isMultiFactor(fresh)) return plan("mfa");
  if (!fresh.some((e) => atLeast(e.strength, minStrength))) return plan("stronger");
  return { ok: true };
}

/** The evidence that counts for a portal session at `now`: its hosted session's and the portal's, within ten minutes. */
export async function freshEvidence(ctx: EndpointContext, portal: PortalSession): Promise<Evidence[]> {
  const now = ctx.service.clock.now();
  const t = accountSecurityPortalSessions;
  // Portal sessions of the same user, hosted session and grant (IS NOT DISTINCT FROM: a direct link has no grant).
  const rows = await ctx.service.db
    .select({ evidence: t.evidence })
    .from(t)
    .where(and(eq(t.workspaceId, ctx.workspace.id), eq(t.userId, portal.userId), eq(t.sessionId, portal.sessionId), sql`${t.grantId} is not distinct from ${portal.grantId}`));
  const all = [...readEvidence(portal.session.evidence), ...rows.flatMap((r) => readEvidence(r.evidence))];
  return evidenceSince(all, now, EVIDENCE_REUSE_MS);
}

/** The policy in force for the portal's application, and the account's verification methods. */
export async function portalVerifyMethods(ctx: EndpointContext, portal: PortalSession): Promise<{ policy: AuthPolicy; methods: VerifyMethods; enrolled: EnrolledSummary }> {
  const [row] = await ctx.service.db
    .select({ emailVerified: users.emailVerified, workspacePolicy: workspaces.authPolicy })
    .from(users)
    .innerJoin(workspaces, eq(workspaces.id, users.workspaceId))
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, portal.userId)))
    .limit(1);
  const enrolled = (await enrolledSummary(ctx, portal.userId)) ?? NOTHING_ENROLLED;
  const policy = effectivePolicy(row?.workspacePolicy, readPolicy(portal.client.authPolicy));
  // An email code needs a verified address and a server that can send mail.
  const emailUsable = (row?.emailVerified ?? false) && emailAvailable(ctx.service.config);
  return { policy, enrolled, methods: verifyMethods(policy, enrolled, emailUsable) };
}

/** The challenges (email code, WebAuthn) of a portal session's verification are bound to it. */
export function portalBinding(portal: Pick<PortalSession, "id">): ChallengeBinding {
  return { purpose: "portal", bindingId: portal.id };
}

/**
 * The one check before each sensitive change: `{ ok: true }` when the portal's fresh evidence is
 * enough for `need`, otherwise what the user must verify (the portal's verification form shows it).
 */
export async function requireEvidence(ctx: EndpointContext, portal: PortalSession, need: EvidenceNeed): Promise<EvidenceVerdict> {
  const [{ policy, methods }, fresh] = await Promise.all([portalVerifyMethods(ctx, portal), freshEvidence(ctx, portal)]);
  return judgeEvidence(need, policy, methods, fresh);
}

/**
 * Records a verification made in the portal on the portal session row (one conditional UPDATE:
 * only while the portal session is unended). The latest event per method and factor is kept.
 */
export async function recordPortalEvidence(ctx: EndpointContext, portal: PortalSession, event: Evidence): Promise<boolean> {
  const t = accountSecurityPortalSessions;
  return ctx.service.db.transaction(async (tx) => {
    const [row] = await tx
      .select({ evidence: t.evidence })
      .from(t)
      .where(and(eq(t.workspaceId, ctx.workspace.id), eq(t.id, portal.id), isNull(t.endedAt)))
      .for("update");
    if (!row) return false;
    const current = readEvidence(row.evidence);
    const i = current.findIndex((e) => e.method === event.method && e.factorId === event.factorId);
    const next = i < 0 ? [...current, event] : current.map((e, j) => (j === i ? event : e));
    await tx.update(t).set({ evidence: next, verifiedAt: new Date(event.at) }).where(eq(t.id, portal.id));
    return true;
  });
}

/**
 * A factor the portal may remove one of: a second factor (role `"enrolled"`). Removing it needs a
 * fresh event at least as strong as the factor's own evidence (lib/authn/evidence.ts `strengthOf`).
 */
export type RemovableFactor = SecondFactorKind;

/**
 * Whether removing one factor of `kind` would take away the last factor the policy requires:
 * - with MFA required, the last second factor (lib/authn/factors/registry.ts `SECOND_FACTOR_KINDS`:
 *   authenticator app, security key, passkey);
 * - the last one of the only first factor the policy accepts (passkeys as the only first factor);
 * - with passkey enrolment "require" (a rule about passkeys by name), the last passkey.
 * Such a removal is refused whatever the evidence.
 */
export function isLastRequiredFactor(policy: AuthPolicy, enrolled: EnrolledSummary, kind: RemovableFactor): boolean {
  const after = (k: SecondFactorKind) => enrolled[k] - (k === kind ? 1 : 0);
  if (policy.mfa === "required" && SECOND_FACTOR_KINDS.reduce((n, k) => n + after(k), 0) <= 0) return true;
  const onlyFirstFactor = policy.firstFactors.length === 1 && policy.firstFactors[0] === kind;
  return (onlyFirstFactor || (kind === "passkey" && policy.passkeyEnrollment === "require")) && after(kind) <= 0;
}

/**
 * The check before removing a factor: refused outright when it is the last one the policy
 * requires (`last_required`), otherwise `requireEvidence` with the factor's strength.
 */
export async function requireRemovalEvidence(
  ctx: EndpointContext,
  portal: PortalSession,
  kind: RemovableFactor,
): Promise<EvidenceVerdict | { ok: false; lastRequired: true }> {
  const [{ policy, methods, enrolled }, fresh] = await Promise.all([portalVerifyMethods(ctx, portal), freshEvidence(ctx, portal)]);
  if (isLastRequiredFactor(policy, enrolled, kind)) return { ok: false, lastRequired: true };
  return judgeEvidence({ remove: strengthOf(kind) }, policy, methods, fresh);
}
