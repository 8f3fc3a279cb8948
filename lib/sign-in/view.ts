/**
 * What the hosted sign-in page shows for a transaction: the step the flow is at
 * (lib/sign-in/flow.ts) and what each step's form needs. Each factor's part of the view is
 * loaded by its own module in ./steps.
 */
import { and, eq } from "drizzle-orm";
import { clients, users } from "../../db/schema";
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
    };

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
  const [email, webauthn, totp] = await Promise.all([emailView(ctx, tx, step, policy), webauthnView(ctx, tx, step), totpView(ctx, tx, step)]);
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
  };
}
