/**
 * What the portal lets a user do with how they sign in: list their factors, add a passkey, a
 * security key or an authenticator app, rename a passkey or security key, remove a factor, and
 * generate (or regenerate) recovery codes, shown once.
 *
 * Every function acts for the portal's user only (`PortalActor`): a factor id of another user
 * matches nothing and answers `not_found`, like an unknown one. The step-up evidence each action
 * needs, and the policy's last required factor, are ./evidence.ts's, asked by the routes
 * (./credential-routes.ts); this module does the change and its audit event (an addition's is
 * written by the factor's enrolment itself, as in the sign-in). Failures are values
 * (`{ ok: false, reason }`), which the routes turn into the hosted error catalogue's messages.
 */
import { and, eq } from "drizzle-orm";
import QRCode from "qrcode";
import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import { users, webauthnCredentials } from "../../db/schema";
import { decryptSecret, encryptSecret } from "../crypto";
import { isStorableText } from "../text";
import type { EndpointContext } from "../http/context";
import type { AuditEventType } from "../audit/catalogue";
import { auditPortal } from "./portal-session";
import { listFactors, removeFactor, type HeldFactor } from "../authn/factors";
import type { EnrolmentSource } from "../authn/factors/contract";
import type { SecondFactorKind } from "../authn/factors/registry";
import { cancelTotpEnrolment, confirmTotpEnrolment, pendingTotpEnrolment, startTotpEnrolment, TOTP_EVIDENCE } from "../authn/factors/totp";
import { generateRecoveryCodes, RECOVERY_CODE_COUNT, RECOVERY_CODE_EVIDENCE } from "../authn/factors/recovery-codes";
import { registrationOptions, registrationUser, verifyRegistration, type WebAuthnKind } from "../authn/factors/webauthn";
// Registrations in the portal: their challenges are bound to the portal session, as its verifications are.
import { portalBinding } from "./evidence";

type Ctx = Pick<EndpointContext, "service" | "workspace" | "hostname" | "origin" | "relatedOriginsRpId">;

/** Who acts: the portal session (its id binds challenges and enrolments) and its user. */
export interface PortalActor {
  id: string;
  userId: string;
  clientPk: string;
  createdAt: Date;
}

/** Where the request came from, for the audit event. */
export interface ActionSource {
  ip: string | null;
}

export type CredentialFailure =
  /** No such factor of this user (unknown, another user's, or already removed). */
  | "not_found"
  /** The name is empty, too long, or holds characters a name cannot. */
  | "invalid_name"
  /** Removing it would leave the user unable to meet the application's sign-in policy. */
  | "last_required_factor"
  /** The code or the authenticator's answer did not verify. */
  | "invalid"
  /** The enrolment or its challenge is gone (expired, used, never started in this visit). */
  | "expired"
  /** This authenticator is already registered. */
  | "duplicate";

export type CredentialResult<T = Record<never, never>> = ({ ok: true } & T) | { ok: false; reason: CredentialFailure };

const fail = (reason: CredentialFailure) => ({ ok: false, reason }) as const;

export const CREDENTIAL_NAME_MAX = 64;

/** The factors the portal lists, by section. */
export interface CredentialList {
  passkeys: HeldFactor[];
  securityKeys: HeldFactor[];
  authenticatorApps: HeldFactor[];
  /** The recovery-code set: how many remain of how many, and when it was generated; null when the user has none. */
  recoveryCodes: { remaining: number; total: number; createdAt: Date; lastUsedAt: Date | null } | null;
}

export async function listCredentials(ctx: Ctx, userId: string): Promise<CredentialList> {
  const factors = await listFactors(ctx, userId);
  const recovery = factors.find((f) => f.kind === RECOVERY_CODE_EVIDENCE.method);
  return {
    passkeys: factors.filter((f) => f.kind === "passkey"),
    securityKeys: factors.filter((f) => f.kind === "security_key"),
    authenticatorApps: factors.filter((f) => f.kind === TOTP_EVIDENCE.method),
    recoveryCodes: recovery
      ? { remaining: recovery.remaining ?? 0, total: RECOVERY_CODE_COUNT, createdAt: recovery.createdAt, lastUsedAt: recovery.lastUsedAt }
      : null,
  };
}

function audit(ctx: Ctx, actor: PortalActor, source: ActionSource, type: Extract<AuditEventType, `account_security.${string}`>, data: Record<string, unknown>): Promise<void> {
  return auditPortal(ctx, actor, source, type, data);
}

/** An enrolment in the portal, as its audit event records it (the factor writes the event). */
const enrolmentSource = (actor: PortalActor, source: ActionSource): EnrolmentSource => ({ ip: source.ip, context: { portal_session: actor.id } });

/** A name as typed: trimmed, inner whitespace collapsed; null when it cannot be a name. */
export function normalizeCredentialName(input: string): string | null {
  const name = input.trim().replace(/\s+/g, " ");
  // Control characters (U+0000 among them, which the database cannot store) are not part of a name.
  if (name.length === 0 || [...name].length > CREDENTIAL_NAME_MAX || !isStorableText(name) || /[\u0000-\u001f\u007f-\u009f]/.test(name)) return null;
  return name;
}

// --- rename ---

/** Renames one of the user's passkeys or security keys. */
export async function renameCredential(ctx: Ctx, actor: PortalActor, credentialId: string, input: string, source: ActionSource): Promise<CredentialResult> {
  const name = normalizeCredentialName(input);
  if (!name) return fail("invalid_name");
  const w = webauthnCredentials;
  const [renamed] = await ctx.service.db
    .update(w)
    .set({ name })
    .where(and(eq(w.workspaceId, ctx.workspace.id), eq(w.userId, actor.userId), eq(w.id, credentialId)))
    .returning({ id: w.id, kind: w.kind });
  if (!renamed) return fail("not_found");
  await audit(ctx, actor, source, "account_security.credential_renamed", { kind: renamed.kind, factor_id: renamed.id, name });
  return { ok: true };
}

// --- remove ---

/** What the portal removes one by one: the user's second factors (the recovery-code set is replaced, not removed). */
export type RemovableKind = SecondFactorKind;

/** The user's factor of `kind` and `id`, as the portal lists it; null when the user has no such factor. */
export async function findCredential(ctx: Ctx, userId: string, kind: RemovableKind, id: string): Promise<HeldFactor | null> {
  return (await listFactors(ctx, userId)).find((f) => f.kind === kind && f.id === id) ?? null;
}

/**
 * Removes one of the user's passkeys, security keys or authenticator apps. The caller has asked
 * ./evidence.ts `requireRemovalEvidence` first (the policy's last required factor, the evidence).
 */
export async function removeCredential(ctx: Ctx, actor: PortalActor, kind: RemovableKind, id: string, source: ActionSource): Promise<CredentialResult> {
  const factor = await findCredential(ctx, actor.userId, kind, id);
  if (!factor) return fail("not_found");
  if (!(await removeFactor(ctx, actor.userId, kind, id))) return fail("not_found");
  await audit(ctx, actor, source, "account_security.credential_removed", { kind, factor_id: id, name: factor.name });
  return { ok: true };
}

// --- authenticator apps ---

/** Starts adding an authenticator app: a new seed, replacing any unfinished one of the user. */
export async function startAuthenticatorApp(ctx: Ctx, actor: PortalActor): Promise<void> {
  await startTotpEnrolment(ctx, actor.userId);
}

export interface PendingAuthenticatorApp {
  /** The otpauth:// URI as an SVG QR code, in a data URL. */
  qrSvg: string;
  /** The seed in base32, for apps that cannot scan, in groups of four. */
  secret: string;
}

/** The authenticator app being added in this portal visit (started after it opened), with its QR code; null when none. */
export async function pendingAuthenticatorApp(ctx: Ctx, actor: PortalActor): Promise<PendingAuthenticatorApp | null> {
  const [user] = await ctx.service.db
    .select({ email: users.email })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, actor.userId)))
    .limit(1);
  const pending = await pendingTotpEnrolment(ctx, actor.userId, actor.createdAt, { issuer: ctx.workspace.name, account: user?.email ?? "account" });
  if (!pending) return null;
  const svg = await QRCode.toString(pending.uri, { type: "svg", errorCorrectionLevel: "M", margin: 1 });
  return { qrSvg: `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`, secret: pending.secret.replace(/(.{4})(?=.)/g, "$1 ") };
}

/** Completes adding the authenticator app with a code from it. */
export async function confirmAuthenticatorApp(ctx: Ctx, actor: PortalActor, code: string, source: ActionSource): Promise<CredentialResult> {
  const pending = await pendingTotpEnrolment(ctx, actor.userId, actor.createdAt);
  if (!pending) return fail("expired");
  const result = await confirmTotpEnrolment(ctx, actor.userId, pending.factorId, code, enrolmentSource(actor, source));
  if (!result.ok) return fail(result.reason === "invalid" ? "invalid" : "expired");
  return { ok: true };
}

/** Drops an unfinished authenticator app of the user ("Cancel"). */
export async function cancelAuthenticatorApp(ctx: Ctx, actor: PortalActor): Promise<void> {
  await cancelTotpEnrolment(ctx, actor.userId);
}

// --- passkeys and security keys ---


/** Creation options (navigator.credentials.create) for a new credential of `kind`, with a fresh challenge bound to this portal session. */
export async function credentialCreationOptions(ctx: Ctx, actor: PortalActor, kind: WebAuthnKind): Promise<PublicKeyCredentialCreationOptionsJSON | null> {
  const user = await registrationUser(ctx, actor.userId);
  if (!user) return null;
  return (await registrationOptions(ctx, portalBinding(actor), user, [kind]))[kind] ?? null;
}

/** Stores the new passkey or security key the browser created (the JSON startRegistration returns), named `name` when given. */
export async function addWebAuthnCredential(
  ctx: Ctx,
  actor: PortalActor,
  kind: WebAuthnKind,
  responseText: string | null,
  source: ActionSource,
  nameInput = "",
): Promise<CredentialResult<{ id: string }>> {
  const name = nameInput.trim() ? normalizeCredentialName(nameInput) : null;
  if (nameInput.trim() && !name) return fail("invalid_name");
  const result = await verifyRegistration(ctx, portalBinding(actor), actor.userId, kind, responseText, enrolmentSource(actor, source), name);
  if (!result.ok) return fail(result.reason === "flagged" ? "invalid" : result.reason);
  return { ok: true, id: result.credentialRowId };
}

// --- recovery codes ---

/** The purpose new recovery codes are sealed under until the page has shown them, bound to the portal session. */
const recoveryCodesPurpose = (actor: PortalActor) => `portal-recovery-codes:${actor.id}`;

/**
 * A new set of recovery codes for the user, voiding the old one. Returns the codes sealed for this
 * portal session (AES-256-GCM under the master key), for the page to show once: only their hashes
 * are stored. `generateRecoveryCodes` records the audit event.
 */
export async function regenerateRecoveryCodes(ctx: Ctx, actor: PortalActor, source: ActionSource): Promise<{ codes: string[]; sealed: string }> {
  const codes = await generateRecoveryCodes(ctx, actor.userId, enrolmentSource(actor, source));
  return { codes, sealed: encryptSecret(ctx.service.config.masterKey, JSON.stringify(codes), recoveryCodesPurpose(actor)) };
}

/** The codes sealed by `regenerateRecoveryCodes` for this portal session; null when they are not (another visit's, or tampered with). */
export function unsealRecoveryCodes(ctx: Ctx, actor: PortalActor, sealed: string | undefined): string[] | null {
  if (!sealed) return null;
  try {
    const codes: unknown = JSON.parse(decryptSecret(ctx.service.config.masterKey, sealed, recoveryCodesPurpose(actor)));
    return Array.isArray(codes) && codes.every((c) => typeof c === "string") ? codes : null;
  } catch {
    return null;
  }
}
