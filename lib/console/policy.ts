/**
 * The authentication policy in the console: the workspace's (every field chosen) and each
 * application's overrides (each field "inherit from the workspace" or its own value), with the
 * effective policy lib/authn/policy.ts computes. The stored shape is the one the workspace file
 * imports and exports (lib/workspaces/document `policyOverrides`/`policyEntry`), so the console,
 * the file and the sign-in read the same values.
 */
import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import { clients, workspaces } from "../../db/schema";
import {
  effectivePolicy,
  FIRST_FACTORS,
  MFA_MODES,
  PASSKEY_ENROLLMENT,
  readPolicy,
  type AuthPolicy,
  type PolicyOverrides,
} from "../authn/policy";
import type { Service } from "../service";
import { checked, checkbox, id } from "./forms";
import { defineOperation, formError, type OperationContext } from "./operation";

export const POLICY_FIELDS = ["firstFactors", "mfa", "passkeyEnrollment", "signUp"] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];

export const FIRST_FACTOR_LABELS: Record<(typeof FIRST_FACTORS)[number], string> = {
  password: "Password",
  email_otp: "Email code",
  passkey: "Passkey",
};
export const MFA_LABELS: Record<AuthPolicy["mfa"], string> = { off: "Off", required: "Required" };
export const PASSKEY_ENROLLMENT_LABELS: Record<AuthPolicy["passkeyEnrollment"], string> = {
  never: "Never ask",
  offer: "Offer (skippable)",
  require: "Require",
};

/** One policy field as a short phrase, for the console's summaries and the audit log. */
export function describePolicyField(field: PolicyField, policy: PolicyOverrides): string {
  switch (field) {
    case "firstFactors":
      return policy.firstFactors ? policy.firstFactors.map((f) => FIRST_FACTOR_LABELS[f]).join(", ") : "—";
    case "mfa":
      return policy.mfa ? MFA_LABELS[policy.mfa] : "—";
    case "passkeyEnrollment":
      return policy.passkeyEnrollment ? PASSKEY_ENROLLMENT_LABELS[policy.passkeyEnrollment] : "—";
    case "signUp":
      return policy.signUp === undefined ? "—" : policy.signUp ? "On" : "Off";
  }
}

export const POLICY_FIELD_LABELS: Record<PolicyField, string> = {
  firstFactors: "Ways to sign in",
  mfa: "Multi-factor authentication",
  passkeyEnrollment: "Passkey enrolment",
  signUp: "Self-service sign-up",
};

/** The policy as labelled rows; with `overrides`, each row says whether the application sets it or inherits it. */
export function policyRows(policy: AuthPolicy, overrides?: PolicyOverrides): { label: string; value: string; source?: "override" | "inherited" }[] {
  return POLICY_FIELDS.map((f) => ({
    label: POLICY_FIELD_LABELS[f],
    value: describePolicyField(f, policy),
    ...(overrides ? { source: overrides[f] === undefined ? ("inherited" as const) : ("override" as const) } : {}),
  }));
}

export interface WorkspacePolicyView {
  /** What the workspace stores (its overrides of the defaults). */
  stored: PolicyOverrides;
  /** The workspace's policy: the defaults with its overrides. */
  policy: AuthPolicy;
}

export async function getWorkspacePolicy(service: Service, workspaceId: string): Promise<WorkspacePolicyView> {
  const [row] = await service.db.select({ authPolicy: workspaces.authPolicy }).from(workspaces).where(eq(workspaces.id, workspaceId)).limit(1);
  return { stored: readPolicy(row?.authPolicy), policy: effectivePolicy(row?.authPolicy, {}) };
}

export interface ApplicationPolicyView {
  clientId: string;
  name: string;
  type: string;
  /** The application's own overrides; a field it leaves out is inherited. */
  overrides: PolicyOverrides;
  /** The policy in force for the application. */
  effective: AuthPolicy;
}

/** The policy of each interactive application (M2M clients sign no one in), by client_id. */
export async function listApplicationPolicies(service: Service, workspaceId: string): Promise<ApplicationPolicyView[]> {
  const [ws, rows] = await Promise.all([
    service.db.select({ authPolicy: workspaces.authPolicy }).from(workspaces).where(eq(workspaces.id, workspaceId)).limit(1),
    service.db
      .select({ clientId: clients.clientId, name: clients.name, type: clients.type, authPolicy: clients.authPolicy })
      .from(clients)
      .where(eq(clients.workspaceId, workspaceId))
      .orderBy(asc(clients.clientId)),
  ]);
  return rows
    .filter((r) => r.type !== "M2M")
    .map((r) => ({ clientId: r.clientId, name: r.name, type: r.type, overrides: readPolicy(r.authPolicy), effective: effectivePolicy(ws[0]?.authPolicy, r.authPolicy) }));
}

export async function getApplicationPolicy(service: Service, workspaceId: string, clientId: string): Promise<ApplicationPolicyView | null> {
  return (await listApplicationPolicies(service, workspaceId)).find((p) => p.clientId === clientId) ?? null;
}

/** The fields whose value differs between two overrides objects (absent differs from any value). */
function changedFields(before: PolicyOverrides, after: PolicyOverrides): PolicyField[] {
  return POLICY_FIELDS.filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]));
}

/** Overrides in the field order the workspace file uses, so stored rows read the same everywhere. */
function ordered(policy: PolicyOverrides): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of POLICY_FIELDS) if (policy[f] !== undefined) out[f] = policy[f];
  return out;
}

const auditChange = (before: PolicyOverrides, after: PolicyOverrides, fields: PolicyField[]) => ({
  changed: fields,
  before: Object.fromEntries(fields.map((f) => [f, before[f] ?? null])),
  after: Object.fromEntries(fields.map((f) => [f, after[f] ?? null])),
});

const firstFactors = checked().pipe(
  z
    .array(z.enum(FIRST_FACTORS, { error: "Choose from password, email code and passkey" }))
    .min(1, "Allow at least one way to sign in")
    .transform((list) => FIRST_FACTORS.filter((f) => list.includes(f))),
);

/**
 * The workspace's policy: every field is chosen in the form, and stored as chosen (so the
 * workspace file exports what the operator saw). One audit event per saved change, naming the
 * fields that changed; saving the form unchanged writes nothing.
 */
export const setWorkspacePolicy = defineOperation({
  name: "workspace.auth_policy_changed",
  role: "admin",
  input: z.object({
    first_factors: firstFactors,
    mfa: z.enum(MFA_MODES, { error: "Choose off or required" }),
    passkey_enrollment: z.enum(PASSKEY_ENROLLMENT, { error: "Choose never, offer or require" }),
    sign_up: checkbox(),
  }),
  async run(ctx: OperationContext, input) {
    const wid = ctx.access.workspace.id;
    const [row] = await ctx.db.select({ authPolicy: workspaces.authPolicy }).from(workspaces).where(eq(workspaces.id, wid)).for("update");
    if (!row) throw formError("This workspace no longer exists");
    const before = readPolicy(row.authPolicy);
    const after: PolicyOverrides = { firstFactors: input.first_factors, mfa: input.mfa, passkeyEnrollment: input.passkey_enrollment, signUp: input.sign_up };
    const fields = changedFields(before, after);
    if (fields.length === 0) return { result: { changed: [] as PolicyField[] }, audit: null };
    await ctx.db.update(workspaces).set({ authPolicy: ordered(after), updatedAt: ctx.now }).where(eq(workspaces.id, wid));
    return { result: { changed: fields }, audit: { target: wid, data: auditChange(before, after, fields) } };
  },
});

const INHERIT = "inherit";

/**
 * An application's overrides: each field inherits the workspace's value or sets its own. The row
 * keeps only the overridden fields, as the workspace file writes them.
 */
export const setApplicationPolicy = defineOperation({
  name: "application.auth_policy_changed",
  role: "admin",
  input: z
    .object({
      client_id: id("application"),
      first_factors_mode: z.enum([INHERIT, "override"], { error: "Choose inherit or override" }),
      first_factors: checked(),
      mfa: z.enum([INHERIT, ...MFA_MODES], { error: "Choose inherit, off or required" }),
      passkey_enrollment: z.enum([INHERIT, ...PASSKEY_ENROLLMENT], { error: "Choose inherit, never, offer or require" }),
      sign_up: z.enum([INHERIT, "on", "off"], { error: "Choose inherit, on or off" }),
    })
    .superRefine((v, issue) => {
      if (v.first_factors_mode !== "override") return;
      const parsed = firstFactors.safeParse(v.first_factors);
      if (!parsed.success) issue.addIssue({ code: "custom", path: ["first_factors"], message: parsed.error.issues[0].message });
    }),
  async run(ctx: OperationContext, input) {
    const wid = ctx.access.workspace.id;
    const [app] = await ctx.db
      .select({ id: clients.id, type: clients.type, authPolicy: clients.authPolicy })
      .from(clients)
      .where(and(eq(clients.workspaceId, wid), eq(clients.clientId, input.client_id)))
      .for("update");
    if (!app) throw formError("This application no longer exists");
    if (app.type === "M2M") throw formError("Machine-to-machine applications sign no one in; they have no authentication policy");
    const before = readPolicy(app.authPolicy);
    const after: PolicyOverrides = {
      ...(input.first_factors_mode === "override" ? { firstFactors: firstFactors.parse(input.first_factors) } : {}),
      ...(input.mfa === INHERIT ? {} : { mfa: input.mfa }),
      ...(input.passkey_enrollment === INHERIT ? {} : { passkeyEnrollment: input.passkey_enrollment }),
      ...(input.sign_up === INHERIT ? {} : { signUp: input.sign_up === "on" }),
    };
    const fields = changedFields(before, after);
    if (fields.length === 0) return { result: { changed: [] as PolicyField[] }, audit: null };
    await ctx.db.update(clients).set({ authPolicy: ordered(after), updatedAt: ctx.now }).where(eq(clients.id, app.id));
    return { result: { changed: fields }, audit: { target: input.client_id, clientId: input.client_id, data: auditChange(before, after, fields) } };
  },
});
