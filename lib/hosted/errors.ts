/**
 * The catalogue of hosted errors: every error a browser is shown by Latchkey's own pages (the
 * hosted error page, the sign-in form's message), by code, with its user-facing text. Routes name
 * a code; the text lives here only (and translations will, beside it).
 *
 * An entry is the page's HTTP status, its title and message, the error code the page shows
 * ("Error code: …", an OAuth error code where one fits) and, when not the default, the line that
 * says what to do next. A message that names something from the request takes it as a parameter:
 * the message is then a function of those parameters, and `hostedError` requires them.
 */
import { hostedErrorPage } from "./html";

export interface HostedErrorEntry {
  status: number;
  title: string;
  /** The text, or a function of the parameters it needs (documented on the entry). */
  message: string | ((params: never) => string);
  /** Shown as "Error code: …" on the page. */
  oauthError: string;
  /** What to do next; the page's default line when absent. */
  next?: string;
}

const REFUSED = "Request refused";
const INVALID_SIGN_IN = "Invalid sign-in request";
const SIGN_OUT_FAILED = "Sign-out failed";
const SIGN_OUT_NEXT = "Return to the application you came from; it can end your session there.";
const ONLY_LOGOUT_PARAMETERS = "send only client_id and post_logout_redirect_uri.";

const signOutFailed = <M extends HostedErrorEntry["message"]>(message: M, status = 400) =>
  ({ status, title: SIGN_OUT_FAILED, message, oauthError: "invalid_request", next: SIGN_OUT_NEXT }) as const;

export const HOSTED_ERRORS = {
  // The hosted sign-in form's post (lib/sign-in).
  cross_site_form: { status: 403, title: REFUSED, message: "This form was submitted from another site.", oauthError: "invalid_request" },
  form_media_type: { status: 415, title: REFUSED, message: "The sign-in form must be sent as a form.", oauthError: "invalid_request" },
  form_too_large: { status: 413, title: REFUSED, message: "The sign-in form is too large.", oauthError: "invalid_request" },
  sign_in_expired: { status: 400, title: "Sign-in expired", message: "This sign-in request has expired or was already completed.", oauthError: "invalid_request" },
  form_unverified: { status: 403, title: REFUSED, message: "The form could not be verified. Reload the page and try again.", oauthError: "invalid_request" },

  // Shown on the sign-in form itself (`?error=`, see SIGN_IN_FORM_ERRORS); status and title apply
  // only if one is ever answered as a page.
  invalid_credentials: { status: 401, title: "Sign-in failed", message: "The email or password is incorrect.", oauthError: "access_denied" },
  rate_limited: { status: 429, title: "Too many attempts", message: "Too many attempts. Wait a moment and try again.", oauthError: "rate_limited" },
  method_not_allowed: { status: 400, title: "Sign-in failed", message: "This sign-in method is not available for this application.", oauthError: "access_denied" },
  invalid_code: { status: 401, title: "Sign-in failed", message: "The code is incorrect. Check it and try again.", oauthError: "access_denied" },
  code_expired: { status: 401, title: "Sign-in failed", message: "This code can no longer be used. Ask for a new one.", oauthError: "access_denied" },
  code_resend_wait: { status: 429, title: "Too many attempts", message: "A code was sent a moment ago. Wait a little before asking for another.", oauthError: "rate_limited" },
  email_unavailable: { status: 503, title: "Sign-in failed", message: "Codes by email are not available right now. Use another way to sign in.", oauthError: "temporarily_unavailable" },
  invalid_email: { status: 400, title: "Sign-in failed", message: "Enter a valid email address.", oauthError: "invalid_request" },
  invalid_recovery_code: { status: 401, title: "Sign-in failed", message: "That recovery code is incorrect or was already used.", oauthError: "access_denied" },
  webauthn_failed: { status: 401, title: "Sign-in failed", message: "The passkey or security key could not be verified. Try again or use another method.", oauthError: "access_denied" },
  credential_refused: {
    status: 401,
    title: "Sign-in failed",
    message: "This passkey or security key was refused because it may have been copied. Use another method, and ask your administrator for help.",
    oauthError: "access_denied",
  },
  passkey_required: { status: 400, title: "Passkey required", message: "This application requires a passkey. Add one to continue.", oauthError: "access_denied" },
  sso_not_configured: { status: 400, title: "Sign-in failed", message: "Single sign-on is not set up for this email domain. Sign in another way.", oauthError: "access_denied" },
  enrollment_failed: { status: 400, title: "Setup failed", message: "The setup could not be completed. Try again.", oauthError: "invalid_request" },
  weak_password: { status: 400, title: "Sign-up failed", message: "Choose a password of at least 8 characters.", oauthError: "invalid_request" },

  // The sign-in page (Next renders it) for a transaction that is gone.
  sign_in_link_expired: {
    status: 400,
    title: "This sign-in link has expired",
    message: "Sign-in requests are valid for 10 minutes and can be used once. Go back to the application and start signing in again.",
    oauthError: "invalid_request",
  },

  // The authorize endpoint, before the client and its redirect URI are verified (lib/oauth/authorize.ts).
  unstorable_sign_in_request: { status: 400, title: INVALID_SIGN_IN, message: "The sign-in request contains a character that is not accepted.", oauthError: "invalid_request" },
  client_id_missing: { status: 400, title: INVALID_SIGN_IN, message: "client_id is missing.", oauthError: "invalid_request" },
  client_id_duplicated: { status: 400, title: INVALID_SIGN_IN, message: "client_id is duplicated.", oauthError: "invalid_request" },
  unknown_application: { status: 404, title: "Unknown application", message: "This application is not known to this workspace, or it is disabled.", oauthError: "invalid_request" },
  machine_client: { status: 400, title: INVALID_SIGN_IN, message: "Machine-to-machine applications cannot sign users in.", oauthError: "invalid_request" },
  invalid_redirect_uri: {
    status: 400,
    title: INVALID_SIGN_IN,
    message: "The redirect URI is missing, duplicated or not registered for this application.",
    oauthError: "invalid_request",
  },
  invalid_state: { status: 400, title: INVALID_SIGN_IN, message: "state must be present once, as 24–128 base64url characters.", oauthError: "invalid_request" },

  // Hosted logout (lib/oauth/logout.ts). Never a redirect: an unverified destination is never followed.
  logout_unstorable: signOutFailed("The sign-out request contains a character that is not accepted."),
  /** `name`: a parameter logout deliberately does not take (id_token_hint, state, …). */
  logout_parameter_refused: signOutFailed((p: { name: string }) => `${p.name} is not accepted; ${ONLY_LOGOUT_PARAMETERS}`),
  /** `name`: any other parameter. */
  logout_parameter_unknown: signOutFailed((p: { name: string }) => `Parameter ${p.name} is not accepted; ${ONLY_LOGOUT_PARAMETERS}`),
  /** `name`: the parameter sent twice. */
  logout_parameter_duplicated: signOutFailed((p: { name: string }) => `Parameter ${p.name} is duplicated.`),
  logout_client_id_missing: signOutFailed("client_id is missing."),
  logout_destination_missing: signOutFailed("post_logout_redirect_uri is missing."),
  logout_unknown_application: signOutFailed("This application is not known to this workspace, or it is disabled.", 404),
  logout_unregistered_destination: signOutFailed("The sign-out destination is not registered for this application."),
  logout_no_session: signOutFailed("You are not signed in here any more, so there is no session to end. You can close this page."),
  logout_no_grant: signOutFailed(
    "This application has no active sign-in in this browser session (it may have been revoked already), so it cannot sign you out here. Your other sign-ins are unchanged.",
  ),
  logout_unavailable: {
    status: 503,
    title: "Sign-out unavailable",
    message: "Signing out is temporarily unavailable. Please try again in a moment.",
    oauthError: "temporarily_unavailable",
  },

  // The account-security portal (lib/account-security/portal-routes.ts, the portal page).
  account_not_available: {
    status: 404,
    title: "Not available",
    message: "Account security settings are not available for this application.",
    oauthError: "not_available",
    next: "Go back to the application you came from.",
  },
  portal_session_ended: {
    status: 401,
    title: "Your security settings session has ended",
    message: "It lasts at most 30 minutes and ends when you sign out. Open your security settings again from the application.",
    oauthError: "portal_session_ended",
  },
  portal_verification_failed: { status: 401, title: "Verification failed", message: "That did not work. Check it and try again.", oauthError: "access_denied" },
  portal_verification_limited: { status: 429, title: "Too many attempts", message: "Too many attempts. Wait a moment and try again.", oauthError: "rate_limited" },
  portal_last_required_factor: {
    status: 400,
    title: "Cannot remove",
    message: "This is the last sign-in method of its kind that your account must keep. Add another one before removing it.",
    oauthError: "invalid_request",
  },
  portal_provider_only: {
    status: 403,
    title: "Verification not possible",
    message:
      "Your account signs in through your organization's identity provider and has no password, email code or passkey to verify with here, so it cannot change security settings.",
    oauthError: "access_denied",
  },

  // The portal's forms for what it manages (lib/account-security/credential-routes.ts): shown on the portal page.
  portal_verification_required: {
    status: 403,
    title: "Verify it's you",
    message: "To add or rename a sign-in method, first verify it's you below. A verification counts for 10 minutes.",
    oauthError: "access_denied",
  },
  portal_stronger_verification_required: {
    status: 403,
    title: "Verify it's you",
    message:
      "Removing a sign-in method or creating new recovery codes needs a recent verification at least as strong as what it changes (for a passkey or security key: one of your passkeys or security keys). Verify below, then try again.",
    oauthError: "access_denied",
  },
  portal_credential_not_found: { status: 404, title: "Not found", message: "That sign-in method no longer exists.", oauthError: "invalid_request" },
  portal_credential_name_invalid: { status: 400, title: "Invalid name", message: "Choose a name of 1 to 64 characters.", oauthError: "invalid_request" },
  portal_credential_not_verified: { status: 400, title: "Not added", message: "That could not be verified. Check it and try again.", oauthError: "invalid_request" },
  portal_credential_expired: { status: 400, title: "Not added", message: "This setup has expired. Start again.", oauthError: "invalid_request" },
  portal_credential_duplicate: { status: 409, title: "Already added", message: "This passkey or security key is already registered.", oauthError: "invalid_request" },
  portal_application_not_found: { status: 404, title: "Not found", message: "You are no longer signed in to that application.", oauthError: "invalid_request" },

  // The backend handoff's browser routes (lib/account-security/handoff-browser.ts).
  account_handoff_expired: {
    status: 400,
    title: "This link has expired",
    message: "Links to your security settings are valid for two minutes and can be used once.",
    oauthError: "invalid_request",
    next: "Go back to the application and open your security settings again.",
  },
  account_handoff_wrong_account: {
    status: 403,
    title: "Different sign-in",
    message: "Your security settings were opened from the application for another sign-in than the one in this browser.",
    oauthError: "access_denied",
    next: "Open them from the application, in the browser where you signed in to it.",
  },
  account_handoff_ended: {
    status: 401,
    title: "Your sign-in has ended",
    message: "Your sign-in to the application has ended, so your security settings cannot be opened from it.",
    oauthError: "invalid_grant",
    next: "Sign in to the application again, then open your security settings.",
  },
  account_completion_failed: {
    status: 400,
    title: "This link cannot be used",
    message: "This link has expired, was already used, or was opened in another browser than the one you signed in with.",
    oauthError: "invalid_request",
    next: "Go back to the application and open your security settings again.",
  },

  // Signing in through an upstream provider (lib/sign-in/steps/federation.ts). Nothing is created when these are shown.
  federation_unavailable: {
    status: 502,
    title: "Sign-in provider unavailable",
    message: "The sign-in provider could not be reached, or it answered with an error. Nothing was changed.",
    oauthError: "temporarily_unavailable",
    next: "Try again in a moment, or go back to the application and sign in another way.",
  },
  federation_denied: {
    status: 400,
    title: "Not signed in",
    message: "The sign-in provider did not sign you in (it was cancelled or refused there).",
    oauthError: "access_denied",
    next: "Go back to the application to try again, or sign in another way.",
  },
  federation_invalid_response: {
    status: 400,
    title: "Sign-in could not be verified",
    message: "The answer from the sign-in provider could not be verified, so it was not accepted. Nothing was changed.",
    oauthError: "invalid_request",
    next: "Go back to the application and sign in again.",
  },
  federation_misconfigured: {
    status: 502,
    title: "Sign-in option not set up",
    message: "This sign-in option is not set up correctly.",
    oauthError: "server_error",
    next: "Sign in another way, or tell the application's administrator.",
  },
  federation_expired: {
    status: 400,
    title: "Sign-in expired",
    message: "This sign-in has expired, was already completed, or was started in another browser.",
    oauthError: "invalid_request",
    next: "Go back to the application and sign in again, in this browser.",
  },
  federation_option_unavailable: {
    status: 400,
    title: "Sign-in option unavailable",
    message: "This sign-in option is no longer available.",
    oauthError: "access_denied",
    next: "Go back to the application and sign in another way.",
  },
  federation_no_email: {
    status: 403,
    title: "No email address",
    message: "The sign-in provider did not share an email address, so no account could be created for you.",
    oauthError: "access_denied",
    next: "Allow the provider to share your email address, or sign in another way.",
  },
  federation_email_unverified: {
    status: 403,
    title: "Email address not verified",
    message: "The sign-in provider has not verified your email address, so no account could be created with it.",
    oauthError: "access_denied",
    next: "Verify your email address with the provider, or sign in another way.",
  },
  federation_domain_of_organization: {
    status: 403,
    title: "Use your organization's sign-in",
    message: "Your email address belongs to an organization that signs its users in through its own provider.",
    oauthError: "access_denied",
    next: "Go back to the application and sign in with your work email to use your organization's sign-in.",
  },
  federation_account_disabled: { status: 403, title: "Sign-in failed", message: "This account is disabled.", oauthError: "access_denied" },
  federation_not_member: {
    status: 403,
    title: "Not a member",
    message: "Your account is no longer a member of the organization this sign-in goes through.",
    oauthError: "access_denied",
    next: "Ask the organization's administrator to add you again.",
  },
  federation_link_failed: {
    status: 409,
    title: "Already linked",
    message: "This sign-in is already linked to another account, so it was not linked to this one.",
    oauthError: "access_denied",
  },

  // Answers the route table gives for a hosted route outside its endpoint (lib/server/router.ts).
  too_many_requests: { status: 429, title: "Too many requests", message: "Too many requests came from your network. Wait a moment and try again.", oauthError: "rate_limited" },
  unstorable_request: { status: 400, title: "Invalid request", message: "The request contains a character that is not accepted.", oauthError: "invalid_request" },
  temporarily_unavailable: {
    status: 503,
    title: "Temporarily unavailable",
    message: "This page is temporarily unavailable. Please try again in a moment.",
    oauthError: "temporarily_unavailable",
  },

  // The console's sign-in routes (lib/console/auth-routes.ts).
  cross_site_sign_out: { status: 403, title: REFUSED, message: "This sign-out was submitted from another site.", oauthError: "invalid_request" },
  /**
   * `reason`: the ConsoleLoginError's own sentence (lib/console/login.ts); the callback shows that
   * error's code (`expired`, `invalid_callback`, …) as the page's code through `oauthError`.
   */
  console_sign_in_failed: { status: 400, title: "Console sign-in failed", message: (p: { reason: string }) => `${p.reason} Start again from /console.`, oauthError: "invalid_request" },
} as const satisfies Record<string, HostedErrorEntry>;

export type HostedErrorCode = keyof typeof HOSTED_ERRORS;

/** The parameters a code's message takes, or undefined when its text is fixed. */
export type HostedErrorParams<C extends HostedErrorCode> = (typeof HOSTED_ERRORS)[C]["message"] extends (params: infer P) => string ? P : undefined;

export interface HostedErrorOverrides {
  /** The page's "Error code: …" instead of the entry's (the console callback shows its own codes). */
  oauthError?: string;
}

type Args<C extends HostedErrorCode> = HostedErrorParams<C> extends undefined ? [overrides?: HostedErrorOverrides] : [params: HostedErrorParams<C>, overrides?: HostedErrorOverrides];

export function isHostedErrorCode(value: unknown): value is HostedErrorCode {
  return typeof value === "string" && Object.hasOwn(HOSTED_ERRORS, value);
}

/** The title and message of a code, for pages Next renders (the sign-in page). */
export function hostedErrorText<C extends HostedErrorCode>(code: C, ...args: Args<C>): { title: string; message: string } {
  const entry: HostedErrorEntry = HOSTED_ERRORS[code];
  const message = typeof entry.message === "string" ? entry.message : (entry.message as (params: unknown) => string)(args[0]);
  return { title: entry.title, message };
}

/** The hosted error page for a code (lib/hosted/html.ts): its status, title, message and code. */
export function hostedError<C extends HostedErrorCode>(code: C, ...args: Args<C>): Response {
  const entry: HostedErrorEntry = HOSTED_ERRORS[code];
  const overrides = (typeof entry.message === "string" ? args[0] : args[1]) as HostedErrorOverrides | undefined;
  const { title, message } = hostedErrorText(code, ...args);
  return hostedErrorPage(entry.status, title, message, overrides?.oauthError ?? entry.oauthError, entry.next);
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
  "credential_refused",
  "passkey_required",
  "enrollment_failed",
  "weak_password",
  "sso_not_configured",
] as const satisfies readonly HostedErrorCode[];
export type SignInFormError = (typeof SIGN_IN_FORM_ERRORS)[number];

/** The sign-in form's message for a `?error=` value, or undefined for anything else. */
export function signInFormMessage(value: unknown): string | undefined {
  return (SIGN_IN_FORM_ERRORS as readonly unknown[]).includes(value) ? HOSTED_ERRORS[value as SignInFormError].message : undefined;
}
