/**
 * What the hosted sign-in page shows for a transaction: the step the flow is at
 * (lib/sign-in/flow.ts) and what each step's form needs. Each factor's part of the view is
 * loaded by its own module in ./steps.
 */
import { and, eq } from "drizzle-orm";
import { clients, organizations, socialProviders, users, type PendingFederatedLink } from "../../db/schema";
import type { TransactionRow } from "../oauth/pending-sign-in";
import { workspaceHasSso } from "../federation/home-realm";
import { socialButtonsFor, type SocialButton } from "../federation/providers";
import type { EndpointContext } from "../http/context";
import type { AuthPolicy } from "../authn/policy";
import { currentStep, signInCsrf, transactionOf, type FlowStep } from "./flow";
import { emailView, type EmailView } from "./steps/email";
import { webauthnView, type WebAuthnView } from "./steps/webauthn";
import { totpView, type TotpView } from "./steps/totp";

export type SignInView =
  | { kind: "expired" }
  | {
      kind: "step";
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
    };

export interface FederationView {
  /** The application's social providers, in the administrator's order (first step only). */
  buttons: SocialButton[];
  /** Whether "Sign in with single sign-on" is offered (an organization of the workspace can be found by email domain). */
  sso: boolean;
  /** An upstream identity waiting for the user to prove the account with this email (lib/federation/identities.ts). */
  linking: { email: string; provider: string } | null;
}

export async function signInView(ctx: EndpointContext, txId: string, cookieHeader: string | null): Promise<SignInView> {
  const open = await transactionOf(ctx, txId, cookieHeader);
  if (!open) return { kind: "expired" };
  const { tx, binding } = open;
  const [{ step, policy }, [client], [user]] = await Promise.all([
    currentStep(ctx, tx, cookieHeader),
    ctx.service.db.select({ name: clients.name }).from(clients).where(eq(clients.id, tx.clientPk)).limit(1),
    tx.userId
      ? ctx.service.db.select({ email: users.email }).from(users).where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, tx.userId))).limit(1)
      : Promise.resolve([]),
  ]);
  const [email, webauthn, totp, federation] = await Promise.all([
    emailView(ctx, tx, step, policy),
    webauthnView(ctx, tx, step),
    totpView(ctx, tx, step),
    federationView(ctx, tx, step),
  ]);
  return {
    kind: "step",
    txId,
    csrf: signInCsrf(ctx, txId, binding),
    basePath: ctx.basePath,
    applicationName: client?.name ?? "the application",
    workspaceName: ctx.workspace.name,
    step,
    policy,
    userEmail: user?.email ?? null,
    email,
    webauthn,
    totp,
    federation,
  };
}

async function federationView(ctx: EndpointContext, tx: TransactionRow, step: FlowStep): Promise<FederationView> {
  if (step.kind !== "first_factor") return { buttons: [], sso: false, linking: null };
  const link = tx.federatedLink;
  const [buttons, sso, provider] = await Promise.all([
    link ? Promise.resolve([]) : socialButtonsFor(ctx, tx.clientPk),
    link ? Promise.resolve(false) : workspaceHasSso(ctx),
    link ? providerName(ctx, link) : Promise.resolve(""),
  ]);
  return { buttons, sso, linking: link ? { email: link.email ?? "", provider } : null };
}

async function providerName(ctx: EndpointContext, link: PendingFederatedLink): Promise<string> {
  if (link.connectionId) {
    const [row] = await ctx.service.db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, link.organizationId ?? "")).limit(1);
    return row?.name ?? "your organization";
  }
  const [row] = await ctx.service.db.select({ name: socialProviders.name }).from(socialProviders).where(eq(socialProviders.id, link.socialProviderId ?? "")).limit(1);
  return row?.name ?? "the provider";
}
