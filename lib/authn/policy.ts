/**
 * The authentication policy: what a sign-in must prove before the hosted session may serve an
 * application. A workspace has one (workspaces.auth_policy); an application may override any of
 * its fields (clients.auth_policy). Stored values are read back through `readPolicy`, which
 * keeps only what it understands, so a stored row can never widen the policy by accident.
 *
 * `nextStep` is the one decision every sign-in step, the authorize endpoint (reuse or step up a
 * live session) and the console's explanation ask: given the policy, the factors the user has
 * enrolled and the evidence proved so far, what is still missing.
 */
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { clientSocialProviders, clients, workspaces } from "../../db/schema";
import { reusable } from "../../db/reusable";
import type { EndpointContext } from "../http/context";
import { completesMultiFactor, isMultiFactor, readEvidence, type Evidence, type EvidenceMethod } from "./evidence";
import {
  BACKUP_KINDS,
  ENROLLABLE_KINDS,
  FIRST_FACTORS,
  FURTHER_FIRST_FACTORS,
  SECOND_FACTOR_KINDS,
  type EnrollableKind,
  type FirstFactor,
  type FurtherFirstFactor,
  type FurtherKind,
  type HeldKind,
} from "./factors/registry";
import type { HostedSession } from "./hosted-session";

/** The kinds that may open a session, as the factors declare them (lib/authn/factors/registry.ts). */
export { FIRST_FACTORS, type FirstFactor } from "./factors/registry";
export const MFA_MODES = ["off", "required"] as const;
export const PASSKEY_ENROLLMENT = ["never", "offer", "require"] as const;
/** Second factors a user can enrol when MFA is required, as the factors declare it (recovery codes come with the first of them). */
export const ENROLLABLE_SECOND_FACTORS = ENROLLABLE_KINDS;

export interface AuthPolicy {
  /** Methods that may open a session (identify the user). At least one. */
  firstFactors: FirstFactor[];
  mfa: (typeof MFA_MODES)[number];
  /** After a successful sign-in of a user without a passkey: never ask, offer (skippable), or require one. */
  passkeyEnrollment: (typeof PASSKEY_ENROLLMENT)[number];
  /** Self-service sign-up with an email address verified by a one-time code. */
  signUp: boolean;
}

export const DEFAULT_POLICY: AuthPolicy = {
  firstFactors: [...FIRST_FACTORS],
  mfa: "off",
  passkeyEnrollment: "never",
  signUp: false,
};

/** One policy as written in the workspace file, the console and the stored rows: every field optional. */
export const policySchema = z
  .object({
    firstFactors: z
      .array(z.enum(FIRST_FACTORS))
      .min(1, "at least one first factor")
      .refine((v) => new Set(v).size === v.length, "first factors must be unique")
      .optional(),
    mfa: z.enum(MFA_MODES).optional(),
    passkeyEnrollment: z.enum(PASSKEY_ENROLLMENT).optional(),
    signUp: z.boolean().optional(),
  })
  .strict();
export type PolicyOverrides = z.infer<typeof policySchema>;

/** A stored policy object back as overrides; anything unreadable counts as no override (the defaults are the safe side only for fields it names, so it is dropped field by field). */
export function readPolicy(stored: unknown): PolicyOverrides {
  if (!stored || typeof stored !== "object") return {};
  const out: PolicyOverrides = {};
  for (const [key, value] of Object.entries(stored)) {
    const one = policySchema.safeParse({ [key]: value });
    if (one.success) Object.assign(out, one.data);
  }
  return out;
}

/** The policy in force for an application: the workspace's, with the application's overrides. */
export function effectivePolicy(workspace: unknown, application: unknown): AuthPolicy {
  return { ...DEFAULT_POLICY, ...readPolicy(workspace), ...readPolicy(application) };
}

/** The policy in force for an application of this workspace (by its row id). */
/**
 * The policy in force for an application, with the social providers it offers (a session opened
 * through one of them is accepted as a first factor only by the applications that offer it).
 */
export type ApplicationPolicy = AuthPolicy & { socialProviderIds: readonly string[] };

export async function policyFor(ctx: Pick<EndpointContext, "service" | "workspace">, clientPk: string): Promise<ApplicationPolicy> {
  const [row] = await policyStatement(ctx.service.db, { workspaceId: ctx.workspace.id, clientPk });
  const ids = row?.socialProviderIds;
  return { ...effectivePolicy(row?.workspace, row?.application), socialProviderIds: Array.isArray(ids) ? ids.filter((v): v is string => typeof v === "string") : [] };
}

/** The workspace's and the application's policies and the application's providers: built once (every sign-in page and step reads them). */
const policyStatement = reusable("latchkey_application_policy", (db) =>
  db
    .select({
      workspace: workspaces.authPolicy,
      application: clients.authPolicy,
      socialProviderIds: sql<string[] | null>`(select json_agg(${clientSocialProviders.providerId}) from ${clientSocialProviders} where ${clientSocialProviders.clientPk} = ${clients.id})`,
    })
    .from(clients)
    .innerJoin(workspaces, eq(workspaces.id, clients.workspaceId))
    .where(and(eq(clients.workspaceId, sql.placeholder("workspaceId")), eq(clients.id, sql.placeholder("clientPk"))))
    .limit(1),
);

/**
 * Whether a live hosted session may serve this application as it is: what it proved meets the
 * application's policy (otherwise the sign-in steps it up). Authorize, the portal's direct link and
 * the handoff's launch URL all ask this.
 */
export async function sessionMeetsPolicy(ctx: Pick<EndpointContext, "service" | "workspace">, clientPk: string, session: Pick<HostedSession, "evidence">): Promise<boolean> {
  return meetsPolicy(await policyFor(ctx, clientPk), readEvidence(session.evidence));
}

/**
 * What the user has enrolled, as the policy needs to know it: how many usable ones of each kind
 * held (lib/authn/factors/registry.ts `HELD_KINDS`; a recovery-code set counts its unused codes),
 * and whether the account has a password.
 */
export type EnrolledSummary = { hasPassword: boolean } & Readonly<Record<HeldKind, number>>;

/** A further factor the user can be asked for when MFA is required, as each kind's role declares it (lib/authn/factors/contract.ts `FactorRole`). */
export type SecondFactorOption = FurtherKind;

export type NextStep =
  /** Nothing proved yet that this application accepts: identify the user with an allowed first factor. */
  | { kind: "first_factor"; allowed: FirstFactor[] }
  /** MFA is required and the user has second factors: ask for one of them. */
  | { kind: "second_factor"; options: SecondFactorOption[] }
  /** MFA is required and the user has none: enrol one before the sign-in completes. */
  | { kind: "enroll_second_factor"; options: EnrollableKind[] }
  /** Offer (or require) a passkey to a user who has none. */
  | { kind: "passkey_offer"; required: boolean }
  | { kind: "done" };

const isFirstFactor = (method: string): method is FirstFactor => (FIRST_FACTORS as readonly string[]).includes(method);

/**
 * Whether the evidence holds a primary event of a method this policy accepts as a first factor. A
 * federated sign-in (lib/federation, `factorId` `connection:<id>` or `social:<id>`) is accepted
 * whatever the list when it came through an organization's enterprise connection (home-realm
 * discovery applies to every application of the workspace), and through a social provider only by
 * the applications that offer that provider.
 */
export function hasAllowedFirstFactor(policy: AuthPolicy & { socialProviderIds?: readonly string[] }, evidence: readonly Evidence[]): boolean {
  return evidence.some((e) => {
    if (e.method === "federated" || e.method === "federated_mfa") {
      const [source, id] = (e.factorId ?? "").split(":");
      return source === "connection" || (source === "social" && (policy.socialProviderIds ?? []).includes(id));
    }
    return isFirstFactor(e.method) && policy.firstFactors.includes(e.method);
  });
}

/** Whether the evidence satisfies the policy's authentication requirements (not the enrolment offers). */
export function meetsPolicy(policy: AuthPolicy & { socialProviderIds?: readonly string[] }, evidence: readonly Evidence[]): boolean {
  return hasAllowedFirstFactor(policy, evidence) && (policy.mfa === "off" || isMultiFactor(evidence));
}

/** What proves more than a mailbox: a further factor the account holds, or a recovery code. */
const BEYOND_MAILBOX: readonly string[] = [...SECOND_FACTOR_KINDS, ...BACKUP_KINDS];

/**
 * The account's further factors a password reset must still see one of before the password
 * changes (lib/authn/passwords/change.ts): what it holds beyond its mailbox (an authenticator app,
 * a security key, a passkey; recovery codes beside them), null when it holds none or one is proved.
 */
export function resetFurtherFactors(enrolled: EnrolledSummary | null, evidence: readonly Evidence[]): SecondFactorOption[] | null {
  if (!enrolled) return null;
  const held = SECOND_FACTOR_KINDS.filter((k) => enrolled[k] > 0);
  if (held.length === 0 || evidence.some((e) => BEYOND_MAILBOX.includes(e.method))) return null;
  return [...held, ...BACKUP_KINDS.filter((k) => enrolled[k] > 0)];
}

/**
 * What the sign-in must do next. `passkeyOfferAnswered` is whether the user already added a
 * passkey or declined the offer in this sign-in.
 */
export function nextStep(policy: AuthPolicy & { socialProviderIds?: readonly string[] }, enrolled: EnrolledSummary | null, evidence: readonly Evidence[], passkeyOfferAnswered = false): NextStep {
  if (!enrolled || !hasAllowedFirstFactor(policy, evidence)) return { kind: "first_factor", allowed: [...policy.firstFactors] };
  if (policy.mfa === "required" && !isMultiFactor(evidence)) {
    // Only what would make the evidence multi-factor is offered: after an email code (possession),
    // an authenticator app or a security key (possession too) would not; a passkey or the password would.
    const completes = (method: EvidenceMethod) => completesMultiFactor(evidence, method);
    const holds = (kind: HeldKind) => enrolled[kind] > 0;
    // The account's own factors a role offers as a further factor, when the application accepts them as a first factor.
    const own: Readonly<Record<FurtherFirstFactor, boolean>> = { password: enrolled.hasPassword };
    const options: SecondFactorOption[] = [...SECOND_FACTOR_KINDS.filter(holds), ...FURTHER_FIRST_FACTORS.filter((k) => own[k] && policy.firstFactors.includes(k))].filter(completes);
    if (options.length === 0) {
      return { kind: "enroll_second_factor", options: ENROLLABLE_SECOND_FACTORS.filter((f) => completes(f)) };
    }
    // Recovery codes stand in for a lost second factor, so they come with (never instead of) one.
    if (options.some((o) => (SECOND_FACTOR_KINDS as readonly SecondFactorOption[]).includes(o))) options.push(...BACKUP_KINDS.filter((k) => holds(k) && completes(k)));
    return { kind: "second_factor", options };
  }
  // "require" is met only by a passkey: declining does not count.
  if (policy.passkeyEnrollment === "require" ? enrolled.passkey === 0 : policy.passkeyEnrollment === "offer" && enrolled.passkey === 0 && !passkeyOfferAnswered) {
    return { kind: "passkey_offer", required: policy.passkeyEnrollment === "require" };
  }
  return { kind: "done" };
}
