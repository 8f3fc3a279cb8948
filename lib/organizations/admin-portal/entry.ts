/**
 * Entering the admin portal with a setup link, on the hosted page under the workspace's issuer
 * (the page is Next's, app/t/[tenant]/organization-admin; its form posts are routes of the table,
 * ./routes.ts).
 *
 * Opening the link (GET, as mail scanners and chat previews do) changes nothing: the page names the
 * organization and offers to send a code to the link's address, shown masked. Asking sends a
 * one-time code there (the email-code factor's challenge, bound to the link, under its send limits
 * and cooldown). Entering the right code proves the mailbox: the link is used (./links.ts
 * `startSession`, one conditional UPDATE) and this browser gets the portal's session cookie. Each
 * post is guarded same-origin and carries a CSRF token bound to the link. A used, revoked, expired
 * or unknown link, or one whose organization is inactive, shows the same hosted error page.
 */
import { recordAudit } from "../../audit/events";
import { emailAvailable, sendMail } from "../../authn/email/transport";
import { plainMessage } from "../../authn/email/plain-message";
import { EMAIL_CODE_TTL_MS, issueEmailCode, sendGate, verifyEmailCode } from "../../authn/factors/email-code";
import { MINUTE } from "../../clock";
import { hostedError } from "../../hosted/errors";
import { hostedFormPost } from "../../hosted/form-post";
import { clientAddressOf } from "../../http/client-address";
import type { EndpointContext } from "../../http/context";
import { clearCookie, parseCookieHeader, serializeCookie } from "../../http/cookies";
import { csrfToken, verifyCsrfToken } from "../../http/csrf";
import { redirect303 } from "../../http/response";
import type { Database } from "../../../db/client";
import { PORTAL_SESSION_ABSOLUTE_MS } from "./limits";
import { endSession, PORTAL_COOKIE, PORTAL_PATH, startableLink, startSession, type LinkRow } from "./links";

export const PORTAL_CODE_POST = `${PORTAL_PATH}/code`;
export const PORTAL_START_POST = `${PORTAL_PATH}/start`;
export const PORTAL_SIGN_OUT_POST = `${PORTAL_PATH}/sign-out`;

/** The page's messages after a post (`?error=`). */
export const ENTRY_ERRORS = {
  code_invalid: "That code is not right. Check the message and try again.",
  code_expired: "That code can no longer be used. Ask for a new one.",
  code_wait: "A code was sent a moment ago. Wait half a minute before asking for another.",
  code_limited: "Too many codes were asked for. Try again later.",
  email_unavailable: "This service cannot send email right now, so the address cannot be confirmed. Ask the team that sent the link.",
} as const;
export type EntryError = keyof typeof ENTRY_ERRORS;

/** The email-code challenge that proves a link's mailbox: a purpose of its own, bound to the link. */
const codeBinding = (link: LinkRow) => ({ purpose: "organization_portal", bindingId: link.id });

/** The link's forms' CSRF token: bound to the workspace, the link and its secret. */
const linkCsrf = (ctx: EndpointContext, link: LinkRow) => csrfToken(ctx.service.config.masterKey, "organization-portal", [ctx.workspace.id, link.id, link.tokenHash]);

/** The address as the page shows it to whoever holds the link: its first character and its domain. */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf("@");
  return at <= 0 ? "•••" : `${address[0]}•••${address.slice(at)}`;
}

export type EntryView =
  | { kind: "unavailable" }
  | { kind: "link"; token: string; csrf: string; organization: string; workspace: string; address: string; codeSent: boolean; error: EntryError | null; codeAction: string; startAction: string };

/** What the page shows for a link (changes nothing). */
export async function entryView(ctx: EndpointContext, query: { link?: string; sent?: string; error?: string }): Promise<EntryView> {
  const link = await startableLink(ctx.service.db, ctx.workspace.id, query.link, ctx.service.clock.now());
  if (!link || !query.link) return { kind: "unavailable" };
  return {
    kind: "link",
    token: query.link,
    csrf: linkCsrf(ctx, link),
    organization: link.organizationName,
    workspace: link.workspaceName,
    address: maskAddress(link.emailNormalized),
    codeSent: query.sent === "1",
    error: query.error && query.error in ENTRY_ERRORS ? (query.error as EntryError) : null,
    codeAction: `${ctx.basePath}${PORTAL_CODE_POST}`,
    startAction: `${ctx.basePath}${PORTAL_START_POST}`,
  };
}

const toPage = (ctx: EndpointContext, query: Record<string, string>) => redirect303(`${ctx.basePath}${PORTAL_PATH}?${new URLSearchParams(query).toString()}`);

/** The startable link a post names, with its CSRF token checked; otherwise the hosted error to answer. */
async function postedLink(ctx: EndpointContext, form: URLSearchParams): Promise<{ link: Awaited<ReturnType<typeof startableLink>> & object; token: string } | Response> {
  const token = form.get("link");
  const link = await startableLink(ctx.service.db, ctx.workspace.id, token, ctx.service.clock.now());
  if (!link || !token) return hostedError("portal_link_unavailable");
  if (!verifyCsrfToken(ctx.service.config.masterKey, "organization-portal", [ctx.workspace.id, link.id, link.tokenHash], form.get("csrf"))) return hostedError("form_unverified");
  return { link, token };
}

/** Sends a code to the link's address (never to anyone else), under the email-code factor's send limits and cooldown. */
export const sendPortalCodeEndpoint = hostedFormPost(async (request, ctx, form) => {
  const posted = await postedLink(ctx, form);
  if (posted instanceof Response) return posted;
  const { link, token } = posted;
  if (!emailAvailable(ctx.service.config)) return toPage(ctx, { link: token, error: "email_unavailable" });
  const gate = await sendGate(ctx, request, link.emailNormalized);
  if (!gate.allowed) return toPage(ctx, { link: token, error: gate.reason === "cooldown" ? "code_wait" : "code_limited" });
  const code = await issueEmailCode(ctx, codeBinding(link), { address: link.emailNormalized, userId: null, deliverable: true });
  await gate.recordSend();
  sendMail(
    ctx,
    plainMessage(link.emailNormalized, `Your code for the ${link.organizationName} admin portal`, [
      `Your code is ${code}. Enter it on the setup page to open the admin portal of ${link.organizationName} (${link.workspaceName}).`,
      `It is valid for ${EMAIL_CODE_TTL_MS / MINUTE} minutes. If you did not ask for it, ignore this message: without the code nobody can open the portal as you.`,
    ]),
  );
  return toPage(ctx, { link: token, sent: "1" });
});

/**
 * Checks the code (one attempt, the email-code factor's guessing limits; a right code is consumed
 * once) and starts the portal: the link is used and this browser's session made, in one
 * transaction; of parallel starts exactly one wins.
 */
export const startPortalEndpoint = hostedFormPost(async (request, ctx, form) => {
  const posted = await postedLink(ctx, form);
  if (posted instanceof Response) return posted;
  const { link, token } = posted;
  const result = await verifyEmailCode(ctx, request, codeBinding(link), form.get("code"));
  if (!result.ok || result.address !== link.emailNormalized) return toPage(ctx, { link: token, sent: "1", error: !result.ok && result.reason === "expired" ? "code_expired" : "code_invalid" });
  const now = ctx.service.clock.now();
  const ip = clientAddressOf(request.headers, ctx.service.config.trustProxy);
  const started = await ctx.service.db.transaction(async (tx) => {
    const made = await startSession(tx as unknown as Database, link, now);
    if (!made) return null;
    await recordAudit(tx as unknown as Database, {
      workspaceId: ctx.workspace.id,
      type: "organization_portal.started",
      actor: `portal:${made.session.id}`,
      subject: link.emailNormalized,
      data: { operator: link.emailNormalized, organization_id: link.organizationId, link_id: link.id, session_id: made.session.id },
      ip,
      at: now,
    });
    return made;
  });
  if (!started) return hostedError("portal_link_unavailable");
  return redirect303(`${ctx.basePath}${PORTAL_PATH}`, [["Set-Cookie", serializeCookie(PORTAL_COOKIE, started.token, `${ctx.basePath}${PORTAL_PATH}`, PORTAL_SESSION_ABSOLUTE_MS / 1000)]]);
});

/** Signs this browser out of the portal: its session ends, its cookie is cleared. */
export const portalSignOutEndpoint = hostedFormPost(async (request, ctx) => {
  await endSession(ctx.service.db, ctx.workspace.id, parseCookieHeader(request.headers.get("cookie")).get(PORTAL_COOKIE), ctx.service.clock.now());
  return redirect303(`${ctx.basePath}${PORTAL_PATH}?signed_out=1`, [["Set-Cookie", clearCookie(PORTAL_COOKIE, `${ctx.basePath}${PORTAL_PATH}`)]]);
});
