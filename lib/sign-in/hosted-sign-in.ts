import { and, eq } from "drizzle-orm";
import { clients, users } from "../../db/schema";
import type { Endpoint, EndpointContext } from "../http/context";
import { parseCookieHeader } from "../http/cookies";
import { csrfToken, verifyCsrfToken } from "../http/csrf";
import { mediaType, readBody } from "../http/form";
import { clientAddressOf } from "../http/client-address";
import { guarded, sameOrigin } from "../http/guards";
import { isStorableText } from "../text";
import { hostedError, type SignInFormError } from "../hosted/errors";
import { completeTransaction, loadOpenTransaction, TX_COOKIE_PREFIX, type TransactionRow } from "../oauth/pending-sign-in";
import { redirect303 } from "../http/response";
import { createHostedSession } from "../authn/hosted-session";
import { evidenceFor } from "../authn/evidence";
import { decoyHash, PASSWORD_MAX_LENGTH, verifyPassword } from "../authn/password";
import { guessingGate } from "../authn/sign-in-limits";

const FORM_LIMIT = 8 * 1024;

/** The form's CSRF token: bound to the workspace, the transaction and the browser's HttpOnly `lk_tx_` cookie for it. */
const formBindings = (ctx: EndpointContext, txId: string, binding: string) => [ctx.workspace.id, txId, binding];

export type SignInView =
  | { kind: "form"; txId: string; csrf: string; applicationName: string; workspaceName: string }
  | { kind: "expired" };

/** What the hosted sign-in page shows for a transaction, read from the browser's cookies. */
export async function signInView(ctx: EndpointContext, txId: string, cookieHeader: string | null): Promise<SignInView> {
  const binding = parseCookieHeader(cookieHeader).get(`${TX_COOKIE_PREFIX}${txId}`);
  const tx = await loadOpenTransaction(ctx, txId, binding);
  if (!tx || !binding) return { kind: "expired" };
  const [client] = await ctx.service.db.select({ name: clients.name }).from(clients).where(eq(clients.id, tx.clientPk)).limit(1);
  const csrf = csrfToken(ctx.service.config.masterKey, "hosted-sign-in", formBindings(ctx, txId, binding));
  return { kind: "form", txId, csrf, applicationName: client?.name ?? "the application", workspaceName: ctx.workspace.name };
}

function backToForm(ctx: EndpointContext, txId: string, error: SignInFormError): Response {
  return redirect303(`${ctx.basePath}/sign-in?tx=${encodeURIComponent(txId)}&error=${error}`);
}

/**
 * POST /sign-in/password. Declared guard: same origin (lib/http/guards.ts). The CSRF token
 * (lib/http/csrf.ts) needs the form and the transaction it is bound to, so it is checked once
 * both are read; it applies to every post, whatever its headers say.
 */
export const passwordSignInEndpoint: Endpoint = guarded(signInWithPassword, { use: [sameOrigin(() => hostedError("cross_site_form"))] });

async function signInWithPassword(request: Request, ctx: EndpointContext): Promise<Response> {
  if (mediaType(request) !== "application/x-www-form-urlencoded") return hostedError("form_media_type");
  let form: URLSearchParams;
  try {
    form = new URLSearchParams(await readBody(request, FORM_LIMIT));
  } catch {
    return hostedError("form_too_large");
  }
  const txId = form.get("tx") ?? "";
  const binding = parseCookieHeader(request.headers.get("cookie")).get(`${TX_COOKIE_PREFIX}${txId}`);
  const tx: TransactionRow | null = await loadOpenTransaction(ctx, txId, binding);
  if (!tx || !binding) return hostedError("sign_in_expired");
  if (!verifyCsrfToken(ctx.service.config.masterKey, "hosted-sign-in", formBindings(ctx, txId, binding), form.get("csrf"))) {
    return hostedError("form_unverified");
  }
  const email = (form.get("email") ?? "").trim().toLowerCase();
  const password = form.get("password") ?? "";
  // An email no account can have (too long, or with U+0000, which the database cannot hold) is a wrong credential.
  if (!email || !password || password.length > PASSWORD_MAX_LENGTH || email.length > 320 || !isStorableText(email)) {
    return backToForm(ctx, txId, "invalid_credentials");
  }

  // Password guessing: when a limit is reached, no password is checked (see sign-in-limits.ts).
  const gate = await guessingGate(ctx, request, email);
  if (!gate.allowed) return backToForm(ctx, txId, "rate_limited");

  const [user] = await ctx.service.db
    .select({ id: users.id, passwordHash: users.passwordHash, status: users.status })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.emailNormalized, email)))
    .limit(1);
  // Always run one argon2id verification so unknown emails and wrong passwords look alike, also in time.
  const ok = await verifyPassword(user?.passwordHash ?? (await decoyHash()), password);
  if (!user || !user.passwordHash || !ok || user.status !== "active") {
    await gate.recordFailure();
    return backToForm(ctx, txId, "invalid_credentials");
  }

  const { session, cookie } = await createHostedSession(ctx, {
    userId: user.id,
    evidence: [evidenceFor("password", ctx.service.clock.now())],
    userAgent: request.headers.get("user-agent"),
    ip: clientAddressOf(request.headers, ctx.service.config.trustProxy),
  });
  return completeTransaction(ctx, tx, session, [["Set-Cookie", cookie]]);
}
