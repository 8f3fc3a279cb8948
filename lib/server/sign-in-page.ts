/**
 * The hosted sign-in page's first step, rendered once per shape and answered from then on without
 * a render (lib/hosted/page-template.ts). Rendering the page costs ~10 ms of CPU, almost all in
 * React and Next; filling a kept template costs a few hundred microseconds more than the view.
 *
 * The listener asks first (`signInPages`, ./node-server.ts `pages`). For a plain GET of
 * `/t/<workspace>/sign-in`, it computes the view as the page would (lib/sign-in/view.ts), then:
 * - a view of the shape kept here (the first step, nothing personal in it: no address entered,
 *   no code sent, no account identified) whose key has a current template: answered from it, with
 *   this request's transaction id, form token, WebAuthn challenge and a fresh CSP nonce;
 * - otherwise: Next renders the page from this very view (handed to it: lib/sign-in/handed-view.ts), and a
 *   page of the kept shape becomes the template of its key.
 *
 * The key is the whole view with the per-request values taken out, the host, the language and
 * the query's other parameters: two requests share a template only when the page would show them
 * the same thing. What the view does not hold (the workspace's branding) is covered by the
 * workspace's token in the process cache (lib/service.ts "Caches and changes": dropped at once by
 * a change, here or announced from another process, and after 30 s whatever happens).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash } from "node:crypto";
import { nodeHeaders } from "../http/client-address";
import { REQUEST_ID_HEADER } from "../http/request-id";
import { negotiateLocale } from "../i18n/locales";
import { requestContext } from "./router";
import { ISSUER_PATH_HEADERS, writeResponse } from "./node-server";
import { failureResponse, loggableError } from "../http/errors";
import { logError } from "../http/log";
import { hostedFailures } from "../oauth/errors";
import { withLocale } from "../i18n/request-locale";
import { cacheGeneration, cacheIfCurrent, workspaceCacheKey, type Service } from "../service";
import { capturePage, fillable, pageNonce, sendTemplate, templateOf, type PageTemplate } from "../hosted/page-template";
import { handView } from "../sign-in/handed-view";
import { signInView, type SignInView } from "../sign-in/view";

/** How long a workspace's templates are answered at most when no change is heard of. */
export const PAGE_TEMPLATE_TTL_MS = 30_000;
/** Templates kept across all workspaces (~20 KB each), least recently used out first. */
export const PAGE_TEMPLATE_LIMIT = 256;

const PAGE_PATH = /^\/t\/([A-Za-z0-9_-]{1,64})\/sign-in$/;
/** The query parameters the page reads; a request with any other is rendered (Next embeds the URL in the page). */
const PAGE_PARAMETERS = new Set(["tx", "error", "sign_up"]);
/** Requests for React's payload or a server action instead of the document: Next's own. */
const NEXT_REQUEST_HEADERS = ["rsc", "next-router-state-tree", "next-router-prefetch", "next-router-segment-prefetch", "next-action", "next-url"];

interface Kept {
  readonly template: PageTemplate;
  /** The workspace's token (`hosted-pages:<id>`) when it was rendered: answered only while it is the same. */
  readonly token: object;
  readonly builtAt: number;
}

/** The GET this cache may answer: its workspace, transaction and the key's query part; null for anything else. */
function pageRequest(req: IncomingMessage): { workspaceId: string; tx: string; query: string } | null {
  if (req.method !== "GET") return null;
  const url = req.url ?? "";
  const q = url.indexOf("?");
  const path = PAGE_PATH.exec(q === -1 ? url : url.slice(0, q));
  if (!path || q === -1) return null;
  for (const name of NEXT_REQUEST_HEADERS) if (req.headers[name] !== undefined) return null;
  const params = new URLSearchParams(url.slice(q + 1));
  let tx: string | null = null;
  const rest: string[] = [];
  for (const [name, value] of params) {
    if (!PAGE_PARAMETERS.has(name)) return null;
    if (name === "tx") {
      if (tx !== null) return null;
      tx = value;
    } else rest.push(`${name}=${value}`);
  }
  return tx ? { workspaceId: path[1], tx, query: rest.join("&") } : null;
}

/**
 * The values of `view` that differ per request, in the order a template holds them after the
 * nonce; null when the view is not of the shape kept (a later step, or anything personal shown).
 */
export function requestValues(view: SignInView): string[] | null {
  if (view.kind !== "step" || view.step.kind !== "first_factor") return null;
  if (view.userEmail !== null || view.enteredEmail !== null || view.federation.linking !== null) return null;
  if (view.email.codeSentTo !== null || view.email.signUp.codeSentTo !== null || view.email.signUp.verifiedAddress !== null || view.passwordReset.codeSentTo !== null) return null;
  // A proof of work's challenge is the request's own.
  if (view.botChallenge !== null) return null;
  const values = [view.txId, view.csrf];
  if (view.webauthn.options !== null) {
    const challenge = (JSON.parse(view.webauthn.options) as { challenge?: unknown }).challenge;
    if (typeof challenge !== "string") return null;
    values.push(challenge);
  }
  return values;
}

/** The view as the key sees it: every per-request value replaced by its place. */
function keyOf(view: SignInView, values: readonly string[], parts: readonly string[]): string {
  let text = JSON.stringify(view);
  values.forEach((value, i) => {
    text = text.replaceAll(value, `\u0000${i}\u0000`);
  });
  return createHash("sha256").update(parts.join("\n")).update("\n").update(text).digest("base64url");
}

/**
 * The listener's hook for the sign-in page: returns false for a request it does not take (the
 * caller goes on as before); otherwise it answers, from a template or through `next`.
 */
export function signInPages(service: Service, next: (req: IncomingMessage, res: ServerResponse) => unknown) {
  const kept = new Map<string, Kept>();

  const current = (workspaceId: string, key: string, values: readonly string[]): PageTemplate | null => {
    const entry = kept.get(key);
    if (!entry) return null;
    const fresh = Date.now() - entry.builtAt < PAGE_TEMPLATE_TTL_MS && service.cache.get(workspaceCacheKey("hosted-pages", workspaceId)) === entry.token;
    if (!fresh || !fillable(entry.template, values)) {
      kept.delete(key);
      return null;
    }
    // Most recently used last.
    kept.delete(key);
    kept.set(key, entry);
    return entry.template;
  };

  const keep = (workspaceId: string, key: string, template: PageTemplate, generation: number) => {
    const tokenKey = workspaceCacheKey("hosted-pages", workspaceId);
    if (!service.cache.has(tokenKey)) cacheIfCurrent(service, generation, tokenKey, {});
    const token = service.cache.get(tokenKey);
    // A change heard of since the view was read: the render may predate it.
    if (!token || cacheGeneration(service) !== generation) return;
    kept.delete(key);
    kept.set(key, { template, token, builtAt: Date.now() });
    while (kept.size > PAGE_TEMPLATE_LIMIT) kept.delete(kept.keys().next().value!);
  };

  async function answer(req: IncomingMessage, res: ServerResponse, request: { workspaceId: string; tx: string; query: string }): Promise<void> {
    const generation = cacheGeneration(service);
    const headers = nodeHeaders(req);
    const locale = negotiateLocale(headers.get("accept-language"));
    let view: SignInView;
    try {
      const ctx = await requestContext(service, headers, request.workspaceId);
      if (!ctx) return void next(req, res);
      view = await signInView(ctx, request.tx, headers.get("cookie"), locale, headers);
    } catch (error) {
      // The database could not answer within its bound: the hosted page's 503 (a render would wait for it again).
      return writeResponse(withLocale(locale, () => failureResponse(hostedFailures, error, "GET /t/{id}/sign-in")), res, ISSUER_PATH_HEADERS);
    }
    const values = requestValues(view);
    const key = values && keyOf(view, values, [request.workspaceId, headers.get("host") ?? "", locale, request.query]);
    if (values && key) {
      const nonce = pageNonce();
      const template = current(request.workspaceId, key, [nonce, ...values]);
      if (template) return sendTemplate(req, res, template, [nonce, ...values]);
    }
    res.once("close", handView(String(req.headers[REQUEST_ID_HEADER]), view));
    if (values && key) {
      capturePage(res, (page) => {
        const nonce = page && /'nonce-([A-Za-z0-9+/=]+)'/.exec(String(page.headers["content-security-policy"] ?? ""))?.[1];
        const template = page && nonce ? templateOf(page, [nonce, ...values]) : null;
        if (template) keep(request.workspaceId, key, template, generation);
      });
    }
    await next(req, res);
  }

  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const request = pageRequest(req);
    if (!request) return false;
    answer(req, res, request).catch((error) => {
      logError("the sign-in page failed", loggableError(error), String(req.headers[REQUEST_ID_HEADER]));
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      res.end("Internal server error");
    });
    return true;
  };
}
