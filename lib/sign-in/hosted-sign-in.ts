import { and, eq } from "drizzle-orm";
import { clients, users } from "../../db/schema";
import { deriveKey, hmacBase64Url, safeEqual } from "../crypto";
import type { Endpoint, EndpointContext } from "../http/context";
import { parseCookieHeader } from "../http/cookies";
import { mediaType, readBody } from "../http/form";
import { clientAddressOf } from "../http/client-address";
import { isStorableText } from "../text";
import { hostedErrorPage } from "../hosted/html";
import { completeTransaction, loadOpenTransaction, TX_COOKIE_PREFIX, type TransactionRow } from "../oauth/pending-sign-in";
import { redirect303 } from "../http/response";
import { createHostedSession } from "../authn/hosted-session";
import { decoyHash, PASSWORD_MAX_LENGTH, verifyPassword } from "../authn/password";
import { guessingGate } from "../authn/sign-in-limits";

export const ACR_PASSWORD = "urn:latchkey:loa:1";
const FORM_LIMIT = 8 * 1024;

function csrfToken(ctx: EndpointContext, txId: string, binding: string): string {
  return hmacBase64Url(deriveKey(ctx.service.config.masterKey, "hosted-csrf"), `${ctx.workspace.id}.${txId}.${binding}`);
}

export type SignInView =
  | { kind: "form"; txId: string; csrf: string; applicationName: string; workspaceName: string }
  | { kind: "expired" };

/** What the hosted sign-in page shows for a transaction, read from the browser's cookies. */
export async function signInView(ctx: EndpointContext, txId: string, cookieHeader: string | null): Promise<SignInView> {
  const binding = parseCookieHeader(cookieHeader).get(`${TX_COOKIE_PREFIX}${txId}`);
  const tx = await loadOpenTransaction(ctx, txId, binding);
  if (!tx || !binding) return { kind: "expired" };
  const [client] = await ctx.service.db.select({ name: clients.name }).from(clients).where(eq(clients.id, tx.clientPk)).limit(1);
  return { kind: "form", txId, csrf: csrfToken(ctx, txId, binding), applicationName: client?.name ?? "the application", workspaceName: ctx.workspace.name };
}

/**
 * A hosted form post must come from our own pages. Browsers say so in Sec-Fetch-Site; the Origin
 * header is "null" under our no-referrer policy, so only a real, different origin refuses. The
 * CSRF token bound to the HttpOnly transaction cookie is the check that always applies.
 */
function sameOrigin(request: Request, publicUrl: string): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin";
  const origin = request.headers.get("origin");
  return origin === null || origin === "null" || origin === publicUrl;
}

function backToForm(ctx: EndpointContext, txId: string, error: string): Response {
  return redirect303(`${ctx.basePath}/sign-in?tx=${encodeURIComponent(txId)}&error=${error}`);
}

export const passwordSignInEndpoint: Endpoint = async (request, ctx) => {
  if (!sameOrigin(request, ctx.service.config.publicUrl)) {
    return hostedErrorPage(403, "Request refused", "This form was submitted from another site.", "invalid_request");
  }
  if (mediaType(request) !== "application/x-www-form-urlencoded") {
    return hostedErrorPage(415, "Request refused", "The sign-in form must be sent as a form.", "invalid_request");
  }
  let form: URLSearchParams;
  try {
    form = new URLSearchParams(await readBody(request, FORM_LIMIT));
  } catch {
    return hostedErrorPage(413, "Request refused", "The sign-in form is too large.", "invalid_request");
  }
  const txId = form.get("tx") ?? "";
  const binding = parseCookieHeader(request.headers.get("cookie")).get(`${TX_COOKIE_PREFIX}${txId}`);
  const tx: TransactionRow | null = await loadOpenTransaction(ctx, txId, binding);
  if (!tx || !binding) {
    return hostedErrorPage(400, "Sign-in expired", "This sign-in request has expired or was already completed.", "invalid_request");
  }
  if (!safeEqual(form.get("csrf") ?? "", csrfToken(ctx, txId, binding))) {
    return hostedErrorPage(403, "Request refused", "The form could not be verified. Reload the page and try again.", "invalid_request");
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
    amr: ["pwd"],
    acr: ACR_PASSWORD,
    userAgent: request.headers.get("user-agent"),
    ip: clientAddressOf(request.headers, ctx.service.config.trustProxy),
  });
  return completeTransaction(ctx, tx, session, [["Set-Cookie", cookie]]);
};
