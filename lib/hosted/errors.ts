/**
 * The catalogue of hosted errors: every error a browser is shown by Latchkey's own pages (the
 * hosted error page, the sign-in form's message), by code. Routes name a code; its words are
 * message keys of the catalogue (lib/i18n), shown in the request's language.
 *
 * An entry is the page's HTTP status, its title and message keys, the error code the page shows
 * ("Error code: …", an OAuth error code where one fits) and, when not the default, the key of the
 * line that says what to do next. A message that names something from the request has `{name}`
 * parameters in its text, and `hostedError` requires them.
 */
import type { Locale } from "../i18n/locales";
import { currentLocale } from "../i18n/request-locale";
import { translateWith, CATALOGUES, type MessageKey, type MessageParams, type ParameterisedKey } from "../i18n/translate";
import { hostedErrorPage } from "./html";

export interface HostedErrorEntry {
  status: number;
  title: MessageKey;
  message: MessageKey;
  /** Shown as "Error code: …" on the page. */
  oauthError: string;
  /** What to do next; the page's default line when absent. */
  next?: MessageKey;
}

const signOutFailed = <M extends MessageKey>(message: M, status = 400) =>
  ({ status, title: "error.title.sign_out_failed", message, oauthError: "invalid_request", next: "error.next.sign_out" }) as const;

export const HOSTED_ERRORS = {
  // The hosted sign-in form's post (lib/sign-in).
  cross_site_form: { status: 403, title: "error.title.refused", message: "error.cross_site_form", oauthError: "invalid_request" },
  form_media_type: { status: 415, title: "error.title.refused", message: "error.form_media_type", oauthError: "invalid_request" },
  form_too_large: { status: 413, title: "error.title.refused", message: "error.form_too_large", oauthError: "invalid_request" },
  sign_in_expired: { status: 400, title: "error.title.sign_in_expired", message: "error.sign_in_expired", oauthError: "invalid_request" },
  form_unverified: { status: 403, title: "error.title.refused", message: "error.form_unverified", oauthError: "invalid_request" },

  // Shown on the sign-in form itself (`?error=`, see SIGN_IN_FORM_ERRORS); status and title apply
  // only if one is ever answered as a page.
  invalid_credentials: { status: 401, title: "error.title.sign_in_failed", message: "error.invalid_credentials", oauthError: "access_denied" },
  rate_limited: { status: 429, title: "error.title.too_many_attempts", message: "error.rate_limited", oauthError: "rate_limited" },
  method_not_allowed: { status: 400, title: "error.title.sign_in_failed", message: "error.method_not_allowed", oauthError: "access_denied" },
  invalid_code: { status: 401, title: "error.title.sign_in_failed", message: "error.invalid_code", oauthError: "access_denied" },
  code_expired: { status: 401, title: "error.title.sign_in_failed", message: "error.code_expired", oauthError: "access_denied" },
  code_resend_wait: { status: 429, title: "error.title.too_many_attempts", message: "error.code_resend_wait", oauthError: "rate_limited" },
  email_unavailable: { status: 503, title: "error.title.sign_in_failed", message: "error.email_unavailable", oauthError: "temporarily_unavailable" },
  invalid_email: { status: 400, title: "error.title.sign_in_failed", message: "error.invalid_email", oauthError: "invalid_request" },
  invalid_recovery_code: { status: 401, title: "error.title.sign_in_failed", message: "error.invalid_recovery_code", oauthError: "access_denied" },
  webauthn_failed: { status: 401, title: "error.title.sign_in_failed", message: "error.webauthn_failed", oauthError: "access_denied" },
  // A passkey or security key attempt over its limit (per client address, or per account and address): a signature cannot be guessed, so it says when to try again.
  webauthn_limited: { status: 429, title: "error.title.too_many_attempts", message: "error.webauthn_limited", oauthError: "rate_limited" },
  credential_refused: {
    status: 401,
    title: "error.title.sign_in_failed",
    message: "error.credential_refused",
    oauthError: "access_denied",
  },
  passkey_required: { status: 400, title: "error.title.passkey_required", message: "error.passkey_required", oauthError: "access_denied" },
  sso_not_configured: { status: 400, title: "error.title.sign_in_failed", message: "error.sso_not_configured", oauthError: "access_denied" },
  // An account an organization's directory created signs in only through the organization's connection (lib/organizations/scim).
  organization_sign_in: { status: 403, title: "error.title.sign_in_failed", message: "error.organization_sign_in", oauthError: "access_denied" },
  enrollment_failed: { status: 400, title: "error.title.setup_failed", message: "error.enrollment_failed", oauthError: "invalid_request" },
  weak_password: { status: 400, title: "error.title.sign_up_failed", message: "error.weak_password", oauthError: "invalid_request" },
  // A new password the workspace's screening refused (lib/authn/passwords/screening.ts), each with why.
  password_common: { status: 400, title: "error.title.sign_up_failed", message: "error.password_common", oauthError: "invalid_request" },
  password_breached: { status: 400, title: "error.title.sign_up_failed", message: "error.password_breached", oauthError: "invalid_request" },
  password_guessable: { status: 400, title: "error.title.sign_up_failed", message: "error.password_guessable", oauthError: "invalid_request" },
  // A protected form posted without the proof of work its sign-in asks (lib/authn/bot-challenge).
  bot_check: { status: 429, title: "error.title.too_many_attempts", message: "error.bot_check", oauthError: "rate_limited" },

  // The sign-in page (Next renders it) for a transaction that is gone.
  sign_in_link_expired: {
    status: 400,
    title: "error.title.sign_in_link_expired",
    message: "error.sign_in_link_expired",
    oauthError: "invalid_request",
  },

  // The authorize endpoint, before the client and its redirect URI are verified (lib/oauth/authorize.ts).
  unstorable_sign_in_request: { status: 400, title: "error.title.invalid_sign_in", message: "error.unstorable_sign_in_request", oauthError: "invalid_request" },
  client_id_missing: { status: 400, title: "error.title.invalid_sign_in", message: "error.client_id_missing", oauthError: "invalid_request" },
  client_id_duplicated: { status: 400, title: "error.title.invalid_sign_in", message: "error.client_id_duplicated", oauthError: "invalid_request" },
  unknown_application: { status: 404, title: "error.title.unknown_application", message: "error.unknown_application", oauthError: "invalid_request" },
  machine_client: { status: 400, title: "error.title.invalid_sign_in", message: "error.machine_client", oauthError: "invalid_request" },
  invalid_redirect_uri: {
    status: 400,
    title: "error.title.invalid_sign_in",
    message: "error.invalid_redirect_uri",
    oauthError: "invalid_request",
  },
  invalid_state: { status: 400, title: "error.title.invalid_sign_in", message: "error.invalid_state", oauthError: "invalid_request" },
  // A pushed authorization request named by the browser (lib/oauth/pushed-authorization).
  request_uri_parameters: { status: 400, title: "error.title.invalid_sign_in", message: "error.request_uri_parameters", oauthError: "invalid_request" },
  invalid_request_uri: { status: 400, title: "error.title.invalid_sign_in", message: "error.invalid_request_uri", oauthError: "invalid_request_uri" },

  // An organization invitation's link that cannot be accepted (lib/organizations/invitations): withdrawn, expired, used, unknown or its organization inactive, all alike.
  invitation_unavailable: { status: 404, title: "error.title.invitation_unavailable", message: "error.invitation_unavailable", oauthError: "invalid_request" },
  // An organization admin portal's setup link that cannot start the portal (lib/organizations/admin-portal): used, revoked, expired, unknown or its organization inactive, all alike.
  portal_link_unavailable: { status: 404, title: "error.title.portal_link_unavailable", message: "error.portal_link_unavailable", oauthError: "invalid_request" },

  // Hosted logout (lib/oauth/logout.ts). Never a redirect: an unverified destination is never followed.
  logout_unstorable: signOutFailed("error.logout_unstorable"),
  /** `name`: a parameter logout deliberately does not take (id_token_hint, state, …). */
  logout_parameter_refused: signOutFailed("error.logout_parameter_refused"),
  /** `name`: any other parameter. */
  logout_parameter_unknown: signOutFailed("error.logout_parameter_unknown"),
  /** `name`: the parameter sent twice. */
  logout_parameter_duplicated: signOutFailed("error.logout_parameter_duplicated"),
  logout_client_id_missing: signOutFailed("error.client_id_missing"),
  logout_destination_missing: signOutFailed("error.logout_destination_missing"),
  logout_unknown_application: signOutFailed("error.unknown_application", 404),
  logout_unregistered_destination: signOutFailed("error.logout_unregistered_destination"),
  logout_no_session: signOutFailed("error.logout_no_session"),
  logout_unavailable: {
    status: 503,
    title: "error.title.sign_out_unavailable",
    message: "error.logout_unavailable",
    oauthError: "temporarily_unavailable",
  },

  // The account-security portal (lib/account-security/portal-routes.ts, the portal page).
  account_not_available: {
    status: 404,
    title: "error.title.not_available",
    message: "error.account_not_available",
    oauthError: "not_available",
    next: "error.next.go_back",
  },
  portal_session_ended: {
    status: 401,
    title: "error.title.portal_session_ended",
    message: "error.portal_session_ended",
    oauthError: "portal_session_ended",
  },
  portal_verification_failed: { status: 401, title: "error.title.verification_failed", message: "error.portal_verification_failed", oauthError: "access_denied" },
  portal_verification_limited: { status: 429, title: "error.title.too_many_attempts", message: "error.rate_limited", oauthError: "rate_limited" },
  portal_last_required_factor: {
    status: 400,
    title: "error.title.cannot_remove",
    message: "error.portal_last_required_factor",
    oauthError: "invalid_request",
  },
  portal_provider_only: {
    status: 403,
    title: "error.title.verification_not_possible",
    message: "error.portal_provider_only",
    oauthError: "access_denied",
  },

  // The portal's forms for what it manages (lib/account-security/credential-routes.ts): shown on the portal page.
  portal_verification_required: {
    status: 403,
    title: "error.title.verify_its_you",
    message: "error.portal_verification_required",
    oauthError: "access_denied",
  },
  portal_stronger_verification_required: {
    status: 403,
    title: "error.title.verify_its_you",
    message: "error.portal_stronger_verification_required",
    oauthError: "access_denied",
  },
  portal_credential_not_found: { status: 404, title: "error.title.not_found", message: "error.portal_credential_not_found", oauthError: "invalid_request" },
  portal_credential_name_invalid: { status: 400, title: "error.title.invalid_name", message: "error.portal_credential_name_invalid", oauthError: "invalid_request" },
  portal_credential_not_verified: { status: 400, title: "error.title.not_added", message: "error.portal_credential_not_verified", oauthError: "invalid_request" },
  portal_credential_expired: { status: 400, title: "error.title.not_added", message: "error.portal_credential_expired", oauthError: "invalid_request" },
  portal_credential_duplicate: { status: 409, title: "error.title.already_added", message: "error.portal_credential_duplicate", oauthError: "invalid_request" },
  portal_application_not_found: { status: 404, title: "error.title.not_found", message: "error.portal_application_not_found", oauthError: "invalid_request" },

  // The backend handoff's browser routes (lib/account-security/handoff-browser.ts).
  account_handoff_expired: {
    status: 400,
    title: "error.title.link_expired",
    message: "error.account_handoff_expired",
    oauthError: "invalid_request",
    next: "error.next.reopen_settings",
  },
  account_handoff_wrong_account: {
    status: 403,
    title: "error.title.different_sign_in",
    message: "error.account_handoff_wrong_account",
    oauthError: "access_denied",
    next: "error.next.open_in_right_browser",
  },
  account_handoff_ended: {
    status: 401,
    title: "error.title.sign_in_ended",
    message: "error.account_handoff_ended",
    oauthError: "invalid_grant",
    next: "error.next.sign_in_then_open",
  },
  account_completion_failed: {
    status: 400,
    title: "error.title.link_unusable",
    message: "error.account_completion_failed",
    oauthError: "invalid_request",
    next: "error.next.reopen_settings",
  },

  // Signing in through an upstream provider (lib/sign-in/steps/federation.ts). Nothing is created when these are shown.
  federation_unavailable: {
    status: 502,
    title: "error.title.provider_unavailable",
    message: "error.federation_unavailable",
    oauthError: "temporarily_unavailable",
    next: "error.next.try_again_later",
  },
  federation_denied: {
    status: 400,
    title: "error.title.not_signed_in",
    message: "error.federation_denied",
    oauthError: "access_denied",
    next: "error.next.try_again_or_other_way",
  },
  federation_invalid_response: {
    status: 400,
    title: "error.title.not_verified",
    message: "error.federation_invalid_response",
    oauthError: "invalid_request",
    next: "error.next.sign_in_again",
  },
  federation_misconfigured: {
    status: 502,
    title: "error.title.option_not_set_up",
    message: "error.federation_misconfigured",
    oauthError: "server_error",
    next: "error.next.other_way_or_admin",
  },
  federation_expired: {
    status: 400,
    title: "error.title.sign_in_expired",
    message: "error.federation_expired",
    oauthError: "invalid_request",
    next: "error.next.sign_in_again_here",
  },
  /** A SAML response no sign-in here asked for (IdP-initiated sign-in is not accepted). */
  federation_unsolicited: {
    status: 400,
    title: "error.title.not_signed_in",
    message: "error.federation_unsolicited",
    oauthError: "invalid_request",
    next: "error.next.sign_in_again",
  },
  federation_option_unavailable: {
    status: 400,
    title: "error.title.option_unavailable",
    message: "error.federation_option_unavailable",
    oauthError: "access_denied",
    next: "error.next.sign_in_other_way",
  },
  federation_no_email: {
    status: 403,
    title: "error.title.no_email",
    message: "error.federation_no_email",
    oauthError: "access_denied",
    next: "error.next.share_email",
  },
  federation_email_unverified: {
    status: 403,
    title: "error.title.email_unverified",
    message: "error.federation_email_unverified",
    oauthError: "access_denied",
    next: "error.next.verify_email",
  },
  federation_domain_of_organization: {
    status: 403,
    title: "error.title.use_organization",
    message: "error.federation_domain_of_organization",
    oauthError: "access_denied",
    next: "error.next.use_work_email",
  },
  federation_not_admitted: { status: 403, title: "error.title.not_member", message: "error.federation_not_admitted", oauthError: "access_denied" },
  federation_account_disabled: { status: 403, title: "error.title.sign_in_failed", message: "error.federation_account_disabled", oauthError: "access_denied" },
  federation_not_member: {
    status: 403,
    title: "error.title.not_member",
    message: "error.federation_not_member",
    oauthError: "access_denied",
    next: "error.next.ask_admin",
  },
  federation_link_failed: {
    status: 409,
    title: "error.title.already_linked",
    message: "error.federation_link_failed",
    oauthError: "access_denied",
  },

  // Answers the route table gives for a hosted route outside its endpoint (lib/server/router.ts).
  too_many_requests: { status: 429, title: "error.title.too_many_requests", message: "error.too_many_requests", oauthError: "rate_limited" },
  unstorable_request: { status: 400, title: "error.title.invalid_request", message: "error.unstorable_request", oauthError: "invalid_request" },
  temporarily_unavailable: {
    status: 503,
    title: "error.title.temporarily_unavailable",
    message: "error.temporarily_unavailable",
    oauthError: "temporarily_unavailable",
  },

  // The console's sign-in routes (lib/console/auth-routes.ts).
  cross_site_sign_out: { status: 403, title: "error.title.refused", message: "error.cross_site_sign_out", oauthError: "invalid_request" },
  /**
   * `reason`: the ConsoleLoginError's own sentence (lib/console/login.ts); the callback shows that
   * error's code (`expired`, `invalid_callback`, …) as the page's code through `oauthError`.
   */
  console_sign_in_failed: { status: 400, title: "error.title.console_sign_in_failed", message: "error.console_sign_in_failed", oauthError: "invalid_request" },
} as const satisfies Record<string, HostedErrorEntry>;

export type HostedErrorCode = keyof typeof HOSTED_ERRORS;

type MessageOf<C extends HostedErrorCode> = (typeof HOSTED_ERRORS)[C]["message"];
/** The parameters a code's message takes (its `{name}`s), or undefined when its text has none. */
export type HostedErrorParams<C extends HostedErrorCode> = MessageOf<C> extends ParameterisedKey ? MessageParams<MessageOf<C>> : undefined;

/**
 * A line under the page's message for whoever wrote the request (lib/hosted/html.ts
 * `HostedErrorDetail`), by message key: shown in the page's language, with the values it names
 * (each as code) or as a link to `link`.
 */
export interface HostedErrorDetailLine {
  message: MessageKey;
  params?: Record<string, string | number>;
  values?: readonly string[];
  /** An absolute URL on this server; the line's text is the link. */
  link?: string;
}

export interface HostedErrorOverrides {
  /** The page's "Error code: …" instead of the entry's (the console callback shows its own codes). */
  oauthError?: string;
  /** The language; by default the request's (lib/i18n/request-locale.ts), English outside one. */
  locale?: Locale;
  /** Lines under the message that say what was received and where to fix it. */
  details?: readonly HostedErrorDetailLine[];
}

type Args<C extends HostedErrorCode> = HostedErrorParams<C> extends undefined ? [overrides?: HostedErrorOverrides] : [params: HostedErrorParams<C>, overrides?: HostedErrorOverrides];

export function isHostedErrorCode(value: unknown): value is HostedErrorCode {
  return typeof value === "string" && Object.hasOwn(HOSTED_ERRORS, value);
}

function split<C extends HostedErrorCode>(code: C, args: unknown[]): { params?: Record<string, string>; overrides: HostedErrorOverrides } {
  const entry: HostedErrorEntry = HOSTED_ERRORS[code];
  const parameterised = /\{\w+\}/.test(CATALOGUES.en[entry.message] ?? "");
  const params = parameterised ? (args[0] as Record<string, string>) : undefined;
  return { params, overrides: ((parameterised ? args[1] : args[0]) as HostedErrorOverrides | undefined) ?? {} };
}

/** The title and message of a code in a language, for pages Next renders (the sign-in page). */
export function hostedErrorText<C extends HostedErrorCode>(code: C, ...args: Args<C>): { title: string; message: string } {
  const entry: HostedErrorEntry = HOSTED_ERRORS[code];
  const { params, overrides } = split(code, args);
  const locale = overrides.locale ?? currentLocale();
  return { title: translateWith(CATALOGUES, locale, entry.title), message: translateWith(CATALOGUES, locale, entry.message, params) };
}

/** The hosted error page for a code (lib/hosted/html.ts): its status, title, message and code, in the request's language. */
export function hostedError<C extends HostedErrorCode>(code: C, ...args: Args<C>): Response {
  const entry: HostedErrorEntry = HOSTED_ERRORS[code];
  const { overrides } = split(code, args);
  const locale = overrides.locale ?? currentLocale();
  const { title, message } = hostedErrorText(code, ...args);
  const details = (overrides.details ?? []).map((line) => {
    const text = translateWith(CATALOGUES, locale, line.message, line.params);
    return { text, values: line.values, link: line.link === undefined ? undefined : { href: line.link, text } };
  });
  const next = entry.next ? translateWith(CATALOGUES, locale, entry.next) : undefined;
  return hostedErrorPage(entry.status, title, message, overrides.oauthError ?? entry.oauthError, next, locale, details);
}

/**
 * The codes the hosted sign-in form shows beside its fields: the form post sends the browser back
 * to `sign-in?tx=…&error=<code>`. Any other `?error=` value shows nothing.
 */
export const SIGN_IN_FORM_ERRORS = [
  "invalid_credentials",
  "rate_limited",
  "method_not_allowed",
  "invalid_code",
  "code_expired",
  "code_resend_wait",
  "email_unavailable",
  "invalid_email",
  "invalid_recovery_code",
  "webauthn_failed",
  "webauthn_limited",
  "credential_refused",
  "passkey_required",
  "enrollment_failed",
  "weak_password",
  "password_common",
  "password_breached",
  "password_guessable",
  "sso_not_configured",
  "organization_sign_in",
  "bot_check",
] as const satisfies readonly HostedErrorCode[];

/** The form errors about a refused new password: shown under the password field. */
export const NEW_PASSWORD_ERRORS: readonly SignInFormError[] = ["weak_password", "password_common", "password_breached", "password_guessable"];
export type SignInFormError = (typeof SIGN_IN_FORM_ERRORS)[number];

/** The sign-in form's message for a `?error=` value in a language (English by default), or undefined for anything else. */
export function signInFormMessage(value: unknown, locale: Locale = "en"): string | undefined {
  return (SIGN_IN_FORM_ERRORS as readonly unknown[]).includes(value) ? translateWith(CATALOGUES, locale, HOSTED_ERRORS[value as SignInFormError].message) : undefined;
}
