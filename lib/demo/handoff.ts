/**
 * The demo application's side of the account-security backend handoff, as docs/account-security.md
 * tells a customer server to build it (SPEC.md "Customer backend routes in the handoff"): the three
 * server-to-server calls (`configuration`, `launch`, `approve`) and the pending launch records.
 * The routes that use them are in ./app.ts.
 *
 * - A call is HTTP Basic with the application's secret, a JSON body, no Origin header (a server's
 *   fetch sends none) and manual redirect handling: a 3xx is an error whose body is not read and
 *   whose Location is never followed; the status is checked before the body is parsed.
 * - A pending record is kept in the browser's own server-side record (the demo's "dashboard
 *   session"), under the launch's random state: it is bound to that session by where it lives, and
 *   taken (read and deleted in one synchronous step) at most once.
 */
import { randomBytes } from "node:crypto";
import type { Registration } from "./latchkey";

/** SPEC: a launch, and the pending record kept for it, live 120 seconds. */
export const LAUNCH_TTL_MS = 120_000;
/** A browser starting launch after launch keeps only its latest few. */
const MAX_PENDING_PER_BROWSER = 5;

export type HandoffEndpoint = "configuration" | "launch" | "approve";

/** A call's answer: its JSON object on 2xx; otherwise the status and the handoff error code (`error`), when there is one. */
export type HandoffAnswer = { ok: true; body: Record<string, unknown> } | { ok: false; status: number; code: string | null };

/** One handoff call for `registration` (a confidential application: it has a secret). */
export async function handoffCall(registration: Registration, endpoint: HandoffEndpoint, body: Record<string, unknown>): Promise<HandoffAnswer> {
  if (registration.clientSecret === null) return { ok: false, status: 0, code: "NO_CLIENT_SECRET" };
  const url = new URL(`${registration.issuer.href}/auth/account/${endpoint}`);
  url.searchParams.set("client_id", registration.clientId);
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { authorization: basicAuthorization(registration.clientId, registration.clientSecret), "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      redirect: "manual",
      cache: "no-store",
    });
  } catch {
    return { ok: false, status: 503, code: null }; // unreachable: nothing was approved
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    return { ok: false, status: response.status, code: null };
  }
  const answer: unknown = await response.json().catch(() => null);
  if (!response.ok || !isRecord(answer)) return { ok: false, status: response.status, code: isRecord(answer) && typeof answer.error === "string" ? answer.error : null };
  return { ok: true, body: answer };
}

/** Basic credentials: base64 of formEncode(client_id) ":" formEncode(client_secret), as at the token endpoint. */
function basicAuthorization(clientId: string, secret: string): string {
  const formEncode = (value: string) => new URLSearchParams([["", value]]).toString().slice(1);
  return `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(secret)}`).toString("base64")}`;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** SPEC.md's pending launch record, for one browser's sign-in. */
export interface PendingLaunch<Kind extends string = string> {
  /** Which of the application's sign-ins (registrations) it was started for. */
  kind: Kind;
  /** The signed-in user: the ID token's `sub` for that registration. */
  sub: string;
  /** What `launch` answered; null until it has. */
  intent: string | null;
  /** Unix milliseconds. */
  expiresAt: number;
}

/** A fresh launch state: 32 random bytes, base64url (43 characters), one per launch. */
export const newLaunchState = () => randomBytes(32).toString("base64url");

/** Stores a pending record under `state`, forgetting expired ones and all but the latest few. */
export function putPendingLaunch<Kind extends string>(records: Map<string, PendingLaunch<Kind>>, state: string, record: PendingLaunch<Kind>, now = Date.now()): void {
  for (const [key, pending] of records) if (pending.expiresAt <= now) records.delete(key);
  records.set(state, record);
  while (records.size > MAX_PENDING_PER_BROWSER) records.delete(records.keys().next().value!);
}

/** Takes the pending record of `state` from this browser's records: at most once, and only while it is live. */
export function takePendingLaunch<Kind extends string>(records: Map<string, PendingLaunch<Kind>>, state: string, now = Date.now()): PendingLaunch<Kind> | undefined {
  const pending = records.get(state);
  if (!pending) return undefined;
  records.delete(state);
  return pending.expiresAt > now ? pending : undefined;
}

/** `expires_at` of a launch or approve answer: Unix milliseconds, an integer; null otherwise. */
export const expiryTime = (value: unknown): number | null => (typeof value === "number" && Number.isSafeInteger(value) ? value : null);

/** Exactly these query parameters, each once; null otherwise. */
export function exactQuery<K extends string>(query: URLSearchParams, names: readonly K[]): Record<K, string> | null {
  const keys = [...query.keys()];
  if (keys.length !== names.length || !names.every((name) => query.getAll(name).length === 1)) return null;
  return Object.fromEntries(names.map((name) => [name, query.get(name)!])) as Record<K, string>;
}
