/**
 * Passkeys and security keys: WebAuthn credentials (@simplewebauthn/server), behind the factor
 * contract (./contract.ts).
 *
 * - A **passkey** is a discoverable credential with user verification (a PIN or a biometric on
 *   the authenticator): it can identify the user on its own, and counts as multi-factor and
 *   phishing-resistant (evidence `passkey`).
 * - A **security key** is a credential used as a second factor: it may be non-discoverable and
 *   needs only user presence (evidence `security_key`).
 *
 * The relying party is the authentication host the request came to (`relyingParty`): the default
 * host or one of the workspace's verified hostnames (lib/hostnames), never an unverified name. A
 * credential works under the RP ID it was enrolled with (`rp_id`): a ceremony offers and accepts
 * only the credentials of the RP IDs in use at this host. Challenges are stored
 * server-side (factor_challenges, kind "webauthn"), bound to what they were issued for, live five
 * minutes and are consumed once, by one conditional UPDATE, before the answer is checked.
 *
 * The signature counter is checked here, after the signature: a counter that does not move
 * forward (when either value is nonzero) refuses the assertion and flags the credential, which
 * never verifies again. Checking it only after the signature means nobody without the
 * authenticator can flag someone else's credential.
 *
 * Every flow verifies an assertion through the factor's one verification (./verify.ts: the
 * guessing gate, this module's check, the account, the failure recorded).
 */
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { and, desc, eq, gt, inArray, isNotNull, isNull, lt, notInArray, sql } from "drizzle-orm";
import { z } from "zod";
import { factorChallenges, users, webauthnCredentials } from "../../../../db/schema";
import { addMs, MINUTE } from "../../../clock";
import { newId, randomToken } from "../../../crypto";
import type { Database } from "../../../../db/client";
import type { EndpointContext } from "../../../http/context";
import { FAILURES_PER_5_MINUTES, type GuessingLimits } from "../../../limits/declarations";
import { isStorableText } from "../../../text";
import { evidenceFor } from "../../evidence";
import type { ChallengeBinding, EnrolledFactor, EnrolmentSource, VerifyFailure, VerifyResult } from "../contract";
import { recordCredentialAdded } from "../enrolment";
import { currentLocale } from "../../../i18n/request-locale";
import { translate } from "../../../i18n/translate";

/** A ceremony's context: the relying party depends on the host the request came to. */
type Ctx = Pick<EndpointContext, "service" | "workspace" | "hostname" | "origin" | "relatedOriginsRpId">;
/** What listing, naming or removing a user's credentials needs: no host. */
type Owner = Pick<EndpointContext, "service" | "workspace">;

export type WebAuthnKind = "passkey" | "security_key";

/** How long a challenge (and the browser's prompt) lives. */
export const WEBAUTHN_CHALLENGE_TTL_MS = 5 * MINUTE;

/** COSE algorithms accepted, most preferred first: ES256, EdDSA, RS256. Nothing else is registered. */
export const WEBAUTHN_ALGORITHMS = [-7, -8, -257];

/** Live challenges kept per binding: a page reloaded many times does not grow the table. */
const LIVE_CHALLENGES_PER_BINDING = 5;

/** A credential id is at most 1023 bytes (WebAuthn), so at most 1364 base64url characters. */
const MAX_CREDENTIAL_ID = 1364;
const TRANSPORTS = new Set(["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"]);

/** The relying party of a ceremony at the request's host. */
export interface RelyingParty {
  /** The RP ID new credentials are enrolled under, and a passkey sign-in (no account named yet) asks for. */
  id: string;
  /** The only origin accepted: the request's, exactly. */
  origin: string;
  /**
   * The RP IDs whose credentials work here, `id` first: with related origins, also the
   * hostname's own, so credentials enrolled there before keep working there.
   */
  accepted: readonly string[];
}

/**
 * The relying party at the host the request came to. Its RP ID is that host's name, except at a
 * workspace hostname while the workspace has WebAuthn related origins on and a primary hostname:
 * then the primary's (the context's `relatedOriginsRpId`, resolved once per request by the
 * hostnames' rule), so one passkey works at every hostname of the workspace; the origin stays the
 * request's, and the primary's `/.well-known/webauthn` lists it.
 */
export async function relyingParty(ctx: Ctx): Promise<RelyingParty> {
  const { hostname: own, origin } = new URL(ctx.origin);
  const related = ctx.hostname === null ? null : await ctx.relatedOriginsRpId();
  const id = related ?? own;
  return { id, origin, accepted: id === own ? [id] : [id, own] };
}

// --- challenges ---

/** The challenges of one binding (purpose "sign_in" for assertions, "enroll" for registrations) issued for `userId` (null: before the user is known). */
function challengeWhere(ctx: Ctx, binding: ChallengeBinding, userId: string | null) {
  const c = factorChallenges;
  return and(
    eq(c.workspaceId, ctx.workspace.id),
    eq(c.kind, "webauthn"),
    eq(c.purpose, binding.purpose),
    eq(c.bindingId, binding.bindingId),
    userId === null ? isNull(c.userId) : eq(c.userId, userId),
  );
}

/** The library takes a challenge as bytes and writes it base64url-encoded: stored as written, so it compares with the client data's. */
const challengeBytes = (challenge: string) => Buffer.from(challenge, "base64url");

/**
 * A new challenge for `binding` (and, when the prompt is for a known user, that user). Of the
 * binding's earlier challenges only the newest live ones for the same user are kept (used,
 * expired and earlier steps' are dropped), so reloading a page does not grow the table.
 */
async function issueChallenge(ctx: Ctx, binding: ChallengeBinding, userId: string | null): Promise<string> {
  const c = factorChallenges;
  const db = ctx.service.db;
  const now = ctx.service.clock.now();
  const keep = db
    .select({ id: c.id })
    .from(c)
    .where(and(challengeWhere(ctx, binding, userId), isNull(c.consumedAt), gt(c.expiresAt, now)))
    .orderBy(desc(c.createdAt))
    .limit(LIVE_CHALLENGES_PER_BINDING - 1);
  await db
    .delete(c)
    .where(and(eq(c.workspaceId, ctx.workspace.id), eq(c.kind, "webauthn"), eq(c.purpose, binding.purpose), eq(c.bindingId, binding.bindingId), notInArray(c.id, keep)));
  const challenge = randomToken(32);
  await db.insert(c).values({
    id: newId(),
    workspaceId: ctx.workspace.id,
    kind: "webauthn",
    purpose: binding.purpose,
    bindingId: binding.bindingId,
    userId,
    secret: challenge,
    createdAt: now,
    expiresAt: addMs(now, WEBAUTHN_CHALLENGE_TTL_MS),
  });
  return challenge;
}

/** Consumes the live challenge the browser signed, once: true for exactly one caller. */
async function consumeChallenge(ctx: Ctx, binding: ChallengeBinding, userId: string | null, challenge: string): Promise<boolean> {
  const c = factorChallenges;
  const now = ctx.service.clock.now();
  const used = await ctx.service.db
    .update(c)
    .set({ consumedAt: now })
    .where(and(challengeWhere(ctx, binding, userId), eq(c.secret, challenge), isNull(c.consumedAt), gt(c.expiresAt, now)))
    .returning({ id: c.id });
  return used.length === 1;
}

// --- what the browser sends ---

const b64url = z.string().min(1).max(64 * 1024).regex(/^[A-Za-z0-9_-]+$/);

const assertionSchema = z.object({
  id: b64url.max(MAX_CREDENTIAL_ID),
  rawId: b64url.max(MAX_CREDENTIAL_ID),
  type: z.literal("public-key"),
  response: z.object({
    clientDataJSON: b64url,
    authenticatorData: b64url,
    signature: b64url,
    // Empty or absent for a credential that is not discoverable.
    userHandle: z.string().max(1024).regex(/^[A-Za-z0-9_-]*$/).optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).nullish(),
});

const registrationSchema = z.object({
  id: b64url.max(MAX_CREDENTIAL_ID),
  rawId: b64url.max(MAX_CREDENTIAL_ID),
  type: z.literal("public-key"),
  response: z.object({
    clientDataJSON: b64url,
    attestationObject: b64url,
    transports: z.array(z.string().max(32)).max(16).optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).nullish(),
});

/** The JSON the browser posted, parsed; null when it is not one. */
function parseJson(text: string | null): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The challenge the client data says was signed (the library checks it again against the consumed one). */
function signedChallenge(clientDataJSON: string): string | null {
  const data = parseJson(Buffer.from(clientDataJSON, "base64url").toString("utf8"));
  const challenge = data && typeof data === "object" ? (data as { challenge?: unknown }).challenge : undefined;
  return typeof challenge === "string" && isStorableText(challenge) && challenge.length <= 512 ? challenge : null;
}

const userHandleOf = (userId: string) => Buffer.from(userId, "utf8").toString("base64url");

// --- sign-in: assertions ---

/** Options for "Sign in with a passkey" and passkey autofill: any discoverable credential of the RP ID, user verification required. */
export async function passkeySignInOptions(ctx: Ctx, binding: ChallengeBinding): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const [rp, challenge] = await Promise.all([relyingParty(ctx), issueChallenge(ctx, binding, null)]);
  return generateAuthenticationOptions({ rpID: rp.id, challenge: challengeBytes(challenge), timeout: WEBAUTHN_CHALLENGE_TTL_MS, userVerification: "required" });
}

/**
 * Options for a second factor: the user's own credentials (security keys and passkeys that are
 * not flagged) that work here. One ceremony has one RP ID: the first of the accepted ones the user
 * has credentials under. A security key needs only presence; user verification is preferred when
 * one of them is a passkey (which must verify the user), otherwise discouraged. Null when the user
 * has none that work here.
 */
export async function secondFactorOptions(ctx: Ctx, binding: ChallengeBinding, userId: string): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  const rp = await relyingParty(ctx);
  const usable = await usableCredentials(ctx, userId, rp.accepted);
  const rpId = rp.accepted.find((id) => usable.some((c) => c.rpId === id));
  if (rpId === undefined) return null;
  const credentials = usable.filter((c) => c.rpId === rpId);
  const challenge = await issueChallenge(ctx, binding, userId);
  return generateAuthenticationOptions({
    rpID: rpId,
    challenge: challengeBytes(challenge),
    timeout: WEBAUTHN_CHALLENGE_TTL_MS,
    allowCredentials: credentials.map((c) => ({ id: c.credentialId, transports: c.transports })),
    userVerification: credentials.some((c) => c.kind === "passkey") ? "preferred" : "discouraged",
  });
}

async function usableCredentials(ctx: Ctx, userId: string, rpIds: readonly string[]) {
  const w = webauthnCredentials;
  return ctx.service.db
    .select({ credentialId: w.credentialId, transports: w.transports, kind: w.kind, rpId: w.rpId })
    .from(w)
    .where(and(eq(w.workspaceId, ctx.workspace.id), eq(w.userId, userId), inArray(w.rpId, [...rpIds]), isNull(w.flaggedAt)))
    .orderBy(w.createdAt);
}

export interface AssertionExpectation {
  /** The user the assertion must be of (a second factor), or null when it identifies the user (a passkey sign-in). */
  userId: string | null;
  /** The kinds of credential accepted. */
  kinds: readonly WebAuthnKind[];
}

/**
 * Checks an assertion (the JSON @simplewebauthn/browser's startAuthentication returns) once
 * against a challenge issued for `binding`: the challenge consumed first, whatever the outcome (one
 * conditional UPDATE), the credential looked up and judged (its RP ID, owner, kind and user
 * handle), the signature, then the counter. Returns the credential's owner and the evidence; the
 * account itself is judged by the factor's one verification (./verify.ts `verifyWebAuthnFactor`),
 * which is what every flow calls.
 */
export async function checkAssertion(ctx: Ctx, binding: ChallengeBinding, responseText: string | null, expected: AssertionExpectation): Promise<VerifyResult> {
  const parsed = assertionSchema.safeParse(parseJson(responseText));
  if (!parsed.success) return fail("invalid");
  const response = parsed.data as AuthenticationResponseJSON;
  const challenge = signedChallenge(response.response.clientDataJSON);
  if (!challenge || !(await consumeChallenge(ctx, binding, expected.userId, challenge))) return fail("expired");

  const w = webauthnCredentials;
  const [credential] = await ctx.service.db
    .select({ row: w })
    .from(w)
    .innerJoin(users, and(eq(users.workspaceId, w.workspaceId), eq(users.id, w.userId)))
    .where(and(eq(w.workspaceId, ctx.workspace.id), eq(w.credentialId, response.id)))
    .limit(1);
  if (!credential) return fail("invalid");
  const { row } = credential;
  const rp = await relyingParty(ctx);
  // A credential enrolled under another RP ID does not work here, whatever the options offered: as unknown.
  if (!rp.accepted.includes(row.rpId)) return fail("invalid");
  if (expected.userId !== null && row.userId !== expected.userId) return fail("invalid");
  if (!expected.kinds.includes(row.kind)) return fail("invalid");
  // A discoverable credential names its user; it must be the credential's owner (required when it identifies the user).
  const handle = response.response.userHandle || undefined;
  if (handle !== undefined ? handle !== userHandleOf(row.userId) : expected.userId === null) return fail("invalid");

  let info;
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: row.rpId,
      // The counter is judged below, after the signature (see the module's comment).
      credential: { id: row.credentialId, publicKey: Buffer.from(row.publicKey, "base64url"), counter: 0 },
      requireUserVerification: row.kind === "passkey",
    });
    if (!result.verified) return fail("invalid");
    info = result.authenticationInfo;
  } catch {
    return fail("invalid");
  }
  if (row.flaggedAt) return fail("flagged");

  const now = ctx.service.clock.now();
  const next = info.newCounter;
  const [used] = await ctx.service.db
    .update(w)
    .set({ counter: next, lastUsedAt: now, backedUp: info.credentialBackedUp })
    .where(and(eq(w.id, row.id), isNull(w.flaggedAt), next === 0 ? eq(w.counter, 0) : lt(w.counter, next)))
    .returning({ id: w.id });
  if (!used) {
    // The counter did not move forward: a possible clone. Refused now and from now on.
    await ctx.service.db.update(w).set({ flaggedAt: now }).where(and(eq(w.id, row.id), isNull(w.flaggedAt)));
    return fail("flagged");
  }
  return { ok: true, userId: row.userId, evidence: evidenceFor(row.kind, now, row.id) };
}

const fail = (reason: VerifyFailure) => ({ ok: false, reason }) as const;

// --- enrolment: registrations ---

export interface RegistrationUser {
  id: string;
  email: string;
  name: string | null;
}

/**
 * Creation options for each kind asked for, sharing one challenge: a passkey must be discoverable
 * and verify the user; a security key may be neither. The user's existing credentials under the
 * same RP ID are excluded, so one authenticator is not registered twice for it. Attestation "none": Latchkey does not
 * restrict authenticator models.
 */
export async function registrationOptions(
  ctx: Ctx,
  binding: ChallengeBinding,
  user: RegistrationUser,
  kinds: readonly WebAuthnKind[],
): Promise<Partial<Record<WebAuthnKind, PublicKeyCredentialCreationOptionsJSON>>> {
  if (kinds.length === 0) return {};
  const w = webauthnCredentials;
  const rp = await relyingParty(ctx);
  const [existing, challenge] = await Promise.all([
    ctx.service.db
      .select({ credentialId: w.credentialId, transports: w.transports })
      .from(w)
      .where(and(eq(w.workspaceId, ctx.workspace.id), eq(w.userId, user.id), eq(w.rpId, rp.id))),
    issueChallenge(ctx, binding, user.id),
  ]);
  const base = {
    rpName: ctx.workspace.name,
    rpID: rp.id,
    userName: user.email,
    userID: Buffer.from(user.id, "utf8"),
    userDisplayName: user.name ?? user.email,
    challenge: challengeBytes(challenge),
    timeout: WEBAUTHN_CHALLENGE_TTL_MS,
    attestationType: "none" as const,
    excludeCredentials: existing.map((c) => ({ id: c.credentialId, transports: c.transports })),
    supportedAlgorithmIDs: WEBAUTHN_ALGORITHMS,
  };
  const out: Partial<Record<WebAuthnKind, PublicKeyCredentialCreationOptionsJSON>> = {};
  for (const kind of kinds) {
    out[kind] =
      kind === "passkey"
        ? await generateRegistrationOptions({ ...base, authenticatorSelection: { residentKey: "required", userVerification: "required" } })
        : await generateRegistrationOptions({
            ...base,
            authenticatorSelection: { residentKey: "discouraged", userVerification: "discouraged" },
            preferredAuthenticatorType: "securityKey",
          });
  }
  return out;
}

export type RegistrationResult =
  | { ok: true; credentialRowId: string; kind: WebAuthnKind }
  /** `duplicate`: the credential is already registered in this workspace. */
  | { ok: false; reason: VerifyFailure | "duplicate" };

/**
 * Verifies a registration (the JSON startRegistration returns) against a challenge issued to
 * `userId` for `binding`, and stores the credential, named `name` (or the kind's default name),
 * and audits the addition (`account_security.credential_added`, wherever it is enrolled). A
 * passkey registration must verify the user; every registration must show presence and use an
 * algorithm of WEBAUTHN_ALGORITHMS.
 */
export async function verifyRegistration(
  ctx: Ctx,
  binding: ChallengeBinding,
  userId: string,
  kind: WebAuthnKind,
  responseText: string | null,
  source: EnrolmentSource,
  name: string | null = null,
): Promise<RegistrationResult> {
  const parsed = registrationSchema.safeParse(parseJson(responseText));
  if (!parsed.success) return { ok: false, reason: "invalid" };
  const response = parsed.data as RegistrationResponseJSON;
  const challenge = signedChallenge(response.response.clientDataJSON);
  if (!challenge || !(await consumeChallenge(ctx, binding, userId, challenge))) return { ok: false, reason: "expired" };

  const rp = await relyingParty(ctx);
  let info;
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserPresence: true,
      requireUserVerification: kind === "passkey",
      supportedAlgorithmIDs: WEBAUTHN_ALGORITHMS,
    });
    if (!result.verified) return { ok: false, reason: "invalid" };
    info = result.registrationInfo;
  } catch {
    return { ok: false, reason: "invalid" };
  }
  const { credential } = info;
  if (credential.id.length > MAX_CREDENTIAL_ID) return { ok: false, reason: "invalid" };

  const now = ctx.service.clock.now();
  const w = webauthnCredentials;
  const [stored] = await ctx.service.db
    .insert(w)
    .values({
      id: newId(),
      workspaceId: ctx.workspace.id,
      userId,
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString("base64url"),
      counter: credential.counter,
      transports: (response.response.transports ?? []).filter((t) => TRANSPORTS.has(t)),
      kind,
      rpId: rp.id,
      // Unless named, named in the language of the browser that adds it (lib/i18n); the user can rename it.
      name: name ?? translate(currentLocale(), kind === "passkey" ? "credential.passkey" : "credential.securityKey"),
      backedUp: info.credentialBackedUp,
      createdAt: now,
    })
    // The unique index (workspace, credential id): a credential is registered once per workspace.
    .onConflictDoNothing({ target: [w.workspaceId, w.credentialId] })
    .returning({ id: w.id });
  if (!stored) return { ok: false, reason: "duplicate" };
  await recordCredentialAdded(ctx, userId, { kind, factorId: stored.id }, source);
  return { ok: true, credentialRowId: stored.id, kind };
}

// --- abuse limits ---

/**
 * Failed WebAuthn answers, wherever one is checked (sign-in, second factor, the portal), limited
 * before any is checked (./verify.ts `verifyWebAuthnFactor`, the one gate of every flow). A
 * signature cannot be guessed, so the limits bound work and noise rather than guessing, and must
 * never let a stranger lock an owner out:
 * - a passkey sign-in does not name its account until it verifies, so it is limited per client
 *   address;
 * - a second factor (the user already identified, named by user id) is limited per account and
 *   address: an attacker at another address cannot use up the owner's attempts. There is no
 *   account ceiling: it would bound no guessing and only lock the owner out.
 */
export const WEBAUTHN_LIMITS: GuessingLimits = {
  name: "webauthn",
  label: "Passkey or security key",
  perChallenge: `each challenge once, ${WEBAUTHN_CHALLENGE_TTL_MS / MINUTE} minutes, at most ${LIVE_CHALLENGES_PER_BINDING} live per sign-in`,
  unidentified: FAILURES_PER_5_MINUTES,
  perAccountAndAddress: FAILURES_PER_5_MINUTES,
};

/** The user's address and name for creation options. */
export async function registrationUser(ctx: Owner, userId: string): Promise<RegistrationUser | null> {
  const [user] = await ctx.service.db
    .select({ id: users.id, email: users.email, name: users.name })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, userId)))
    .limit(1);
  return user ?? null;
}

/** The user's passkeys and security keys (flagged ones too, marked), newest first, each with the RP ID it works under. */
export async function listWebAuthnCredentials(ctx: Owner, userId: string): Promise<EnrolledFactor<WebAuthnKind>[]> {
  const w = webauthnCredentials;
  const rows = await ctx.service.db
    .select()
    .from(w)
    .where(and(eq(w.workspaceId, ctx.workspace.id), eq(w.userId, userId)))
    .orderBy(sql`${w.createdAt} desc`);
  return rows.map((r) => ({ kind: r.kind, id: r.id, name: r.name, createdAt: r.createdAt, lastUsedAt: r.lastUsedAt, flagged: r.flaggedAt !== null, rpId: r.rpId }));
}

/** Which of `userIds` have a passkey or a security key, by kind. */
export async function webAuthnHolders(db: Database, workspaceId: string, userIds: string[]): Promise<{ userId: string; kind: WebAuthnKind }[]> {
  if (userIds.length === 0) return [];
  const w = webauthnCredentials;
  return db
    .selectDistinct({ userId: w.userId, kind: w.kind })
    .from(w)
    .where(and(eq(w.workspaceId, workspaceId), inArray(w.userId, userIds)));
}

/** Removes one of the user's credentials of `kind`; true when it was there. */
export async function removeWebAuthnCredential(ctx: Owner, userId: string, kind: WebAuthnKind, id: string): Promise<boolean> {
  const w = webauthnCredentials;
  const gone = await ctx.service.db
    .delete(w)
    .where(and(eq(w.workspaceId, ctx.workspace.id), eq(w.userId, userId), eq(w.id, id), eq(w.kind, kind)))
    .returning({ id: w.id });
  return gone.length > 0;
}
