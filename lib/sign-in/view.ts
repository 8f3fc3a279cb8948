/**
 * What the hosted sign-in page shows for a transaction: the step the flow is at
 * (lib/sign-in/flow.ts) and what each step's form needs. Each factor's part of the view is
 * loaded by its own module in ./steps.
 */
import { and, eq } from "drizzle-orm";
import { clients, organizations, socialProviders, users, type PendingFederatedLink } from "../../db/schema";
import { loadCompletedTransaction, TX_COOKIE_PREFIX, type TransactionRow } from "../oauth/pending-sign-in";
import { parseCookieHeader } from "../http/cookies";
import { workspaceHasSso } from "../federation/home-realm";
import { socialButtonsFor, type SocialButton } from "../federation/providers";
import type { EndpointContext } from "../http/context";
import type { AuthPolicy } from "../authn/policy";
import { currentStep, signInCsrf, transactionOf, type FlowStep } from "./flow";
import { emailView, type EmailView } from "./steps/email";
import { webauthnView, type WebAuthnView } from "./steps/webauthn";
import { totpView, type TotpView } from "./steps/totp";
import { passwordResetView, type PasswordResetView } from "./steps/password-reset";
import { pageChallenge } from "../authn/bot-challenge/gate";
import { signInSettings } from "./page-settings";
import type { HeaderSource } from "../http/client-address";
import { DEFAULT_LOCALE, type Locale } from "../i18n/locales";
import { translate } from "../i18n/translate";

export type SignInView =
  | { kind: "expired" }
  | {
      /** This browser already finished this sign-in (and the transaction has not expired): the way back to the application. */
      kind: "completed";
      applicationName: string;
      workspaceName: string;
      /** The application's origin (or, for the account-security portal, its page); null when there is none to offer. */
      returnTo: string | null;
    }
  | {
      kind: "step";
      /** The language the page is shown in (lib/i18n): the components take their words in it. */
      locale: Locale;
      txId: string;
      csrf: string;
      /** The issuer's base path, `/t/<workspace>`: the forms post under it. */
      basePath: string;
      applicationName: string;
      workspaceName: string;
      step: FlowStep;
      policy: AuthPolicy;
      /** The address of the user the first factor identified (shown from the second step on). */
      userEmail: string | null;
      email: EmailView;
      webauthn: WebAuthnView;
      totp: TotpView;
      federation: FederationView;
      passwordReset: PasswordResetView;
      /** The proof of work the first step's forms ask (ALTCHA's challenge, JSON), or null when they ask none. */
      botChallenge: string | null;
      /** A reset under way (the further factor it asks is for the reset, and the page says so). */
      resetting: boolean;
      /**
       * The address the password form last posted without success (first step only): the form
       * shows it again after an error, so the user does not type it twice.
       */
      enteredEmail: string | null;
    };

export interface FederationView {
  /** The application's social providers, in the administrator's order (first step only). */
  buttons: SocialButton[];
  /** Whether "Sign in with single sign-on" is offered (an organization of the workspace can be found by email domain). */
  sso: boolean;
  /** An upstream identity waiting for the user to prove the account with this email (lib/federation/identities.ts). */
  linking: { email: string; provider: string } | null;
}

/**
 * `headers`: the request's, for the client address the proof of work's thresholds are counted by
 * (lib/authn/bot-challenge); without them only the workspace's and the sign-in's are asked.
 */
export async function signInView(ctx: EndpointContext, txId: string, cookieHeader: string | null, locale: Locale = DEFAULT_LOCALE, headers: HeaderSource | null = null): Promise<SignInView> {
  const open = await transactionOf(ctx, txId, cookieHeader);
  if (!open) return (await completedView(ctx, txId, cookieHeader)) ?? { kind: "expired" };
  const { tx, binding } = open;
  const [{ step, policy }, [client], [user]] = await Promise.all([
    currentStep(ctx, tx, cookieHeader),
    ctx.service.db.select({ name: clients.name }).from(clients).where(eq(clients.id, tx.clientPk)).limit(1),
    tx.userId
      ? ctx.service.db.select({ email: users.email }).from(users).where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, tx.userId))).limit(1)
      : Promise.resolve([]),
  ]);
  // What the first step shows of the password and bot-protection policies (kept per workspace).
  const settings = step.kind === "first_factor" ? await signInSettings(ctx) : null;
  const [email, webauthn, totp, federation, passwordReset, botChallenge] = await Promise.all([
    emailView(ctx, tx, step, policy),
    webauthnView(ctx, tx, step),
    totpView(ctx, tx, step),
    federationView(ctx, tx, step, locale),
    passwordResetView(ctx, tx, step, policy, settings?.reset ?? "off"),
    // The protected forms are the first step's.
    settings ? pageChallenge(ctx, tx, headers, settings.botMode) : null,
  ]);
  return {
    kind: "step",
    locale,
    txId,
    csrf: signInCsrf(ctx, txId, binding),
    basePath: ctx.basePath,
    applicationName: client?.name ?? translate(locale, "signIn.theApplication"),
    workspaceName: ctx.workspace.name,
    step,
    policy,
    userEmail: user?.email ?? null,
    email,
    webauthn,
    totp,
    federation,
    passwordReset,
    resetting: tx.passwordChange === "reset",
    botChallenge,
    enteredEmail: step.kind === "first_factor" ? tx.enteredAddress : null,
  };
}

/** The sign-in this browser already completed, while its transaction lives; null otherwise (the page says "expired"). */
async function completedView(ctx: EndpointContext, txId: string, cookieHeader: string | null): Promise<SignInView | null> {
  const tx = await loadCompletedTransaction(ctx, txId, parseCookieHeader(cookieHeader).get(`${TX_COOKIE_PREFIX}${txId}`));
  if (!tx) return null;
  const [client] = await ctx.service.db
    .select({ name: clients.name, redirectUris: clients.redirectUris })
    .from(clients)
    .where(and(eq(clients.workspaceId, ctx.workspace.id), eq(clients.id, tx.clientPk)))
    .limit(1);
  if (!client) return null;
  return { kind: "completed", applicationName: client.name, workspaceName: ctx.workspace.name, returnTo: wayBack(tx, client.redirectUris) };
}

/**
 * Where "back to the application" goes: only places the application registered. The origin of the
 * redirect URI this sign-in used while it is still registered, else of the first registered one;
 * a portal sign-in goes back to its page under the issuer, a tried one to its console page. Never a URL the request supplied
 * beyond those, and only http(s) origins (an app's custom scheme is not a page to link to).
 */
function wayBack(tx: TransactionRow, registered: string[]): string | null {
  if (tx.purpose === "account" || tx.purpose === "device" || tx.purpose === "try") return tx.returnTo;
  const uri = registered.includes(tx.redirectUri) ? tx.redirectUri : registered[0];
  return uri ? webOrigin(uri) : null;
}

function webOrigin(uri: string): string | null {
  try {
    const url = new URL(uri);
    return url.protocol === "https:" || url.protocol === "http:" ? `${url.origin}/` : null;
  } catch {
    return null;
  }
}

async function federationView(ctx: EndpointContext, tx: TransactionRow, step: FlowStep, locale: Locale): Promise<FederationView> {
  if (step.kind !== "first_factor") return { buttons: [], sso: false, linking: null };
  const link = tx.federatedLink;
  const [buttons, sso, provider] = await Promise.all([
    link ? Promise.resolve([]) : socialButtonsFor(ctx, tx.clientPk),
    link ? Promise.resolve(false) : workspaceHasSso(ctx),
    link ? providerName(ctx, link, locale) : Promise.resolve(""),
  ]);
  return { buttons, sso, linking: link ? { email: link.email ?? "", provider } : null };
}

async function providerName(ctx: EndpointContext, link: PendingFederatedLink, locale: Locale): Promise<string> {
  if (link.connectionId) {
    const [row] = await ctx.service.db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, link.organizationId ?? "")).limit(1);
    return row?.name ?? translate(locale, "signIn.yourOrganization");
  }
  const [row] = await ctx.service.db.select({ name: socialProviders.name }).from(socialProviders).where(eq(socialProviders.id, link.socialProviderId ?? "")).limit(1);
  return row?.name ?? translate(locale, "signIn.theProvider");
}
