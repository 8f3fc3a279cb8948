/** Driving the device flow in tests: the device's requests, and the user's browser on the device page (its forms posted as a browser would). */
import { eq } from "drizzle-orm";
import { deviceAuthorizations } from "../../../db/schema";
import { deviceView, type DeviceView } from "../../../lib/oauth/device-authorization/verification";
import { DEVICE_CODE_GRANT_TYPE } from "../../../lib/oauth/device-authorization/grant";
import { ADA, API, SPA, standardWorkspace, WEB, type TestWorkspace } from "../../helpers/fixtures";
import { basic, call, Jar, PUBLIC_URL, signIn, type Harness } from "../../helpers/harness";
import { workspaceContext } from "../../helpers/factors/sign-in";

/** The standard workspace with the device flow switched on for the SPA and the web app (not for `minimal`). */
export function deviceWorkspace(id: string): TestWorkspace {
  const doc = standardWorkspace(id);
  for (const app of doc.applications) if (app.client_id === SPA.client_id || app.client_id === WEB.client_id) app.device_authorization_grant = true;
  return doc;
}

export interface DeviceGrant {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export function deviceAuthorization(h: Harness, ws: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return call(h, `/t/${ws}/oauth2/device_authorization`, { form, headers });
}

/** A device authorization of the SPA (openid email profile, or what `form` says). */
export async function startDevice(h: Harness, ws: string, form: Record<string, string> = {}): Promise<DeviceGrant> {
  const res = await deviceAuthorization(h, ws, { client_id: SPA.client_id, scope: "openid email profile", ...form });
  if (res.status !== 200) throw new Error(`device authorization answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as DeviceGrant;
}

export function poll(h: Harness, ws: string, deviceCode: string, client: { client_id: string; secret?: string } = SPA) {
  const form: Record<string, string> = { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode };
  if (!client.secret) form.client_id = client.client_id;
  return call(h, `/t/${ws}/oauth2/token`, { form, headers: client.secret ? { authorization: basic(client.client_id, client.secret) } : {} });
}

export async function errorOf(res: Response): Promise<string> {
  return ((await res.json()) as { error: string }).error;
}

/** A browser with a live hosted session of `user` (signed in through the SPA's code flow). */
export async function signedInBrowser(h: Harness, ws: string, user = ADA): Promise<Jar> {
  const { jar } = await signIn(h, ws, { ...SPA, email: user.email, password: user.password });
  return jar;
}

const browser = (jar: Jar) => ({ cookie: jar.header(), headers: { origin: PUBLIC_URL } });

/** The browser submits the user code on the device page; its cookies are taken. */
export async function enterCode(h: Harness, ws: string, jar: Jar, userCode: string, headers: Record<string, string> = {}): Promise<Response> {
  const res = await call(h, `/t/${ws}/device/code`, { form: { user_code: userCode }, cookie: jar.header(), headers: { origin: PUBLIC_URL, ...headers } });
  jar.take(res);
  return res;
}

export async function viewOf(h: Harness, ws: string, jar: Jar, query: { d?: string; user_code?: string; error?: string }): Promise<DeviceView> {
  return deviceView(await workspaceContext(h, ws), query, jar.header());
}

/** The id of the authorization the device page redirected to (`?d=`). */
export function pageId(res: Response): string {
  const d = new URL(res.headers.get("location")!, PUBLIC_URL).searchParams.get("d");
  if (!d) throw new Error(`not sent to an authorization: ${res.headers.get("location")}`);
  return d;
}

/** Approve or deny from the consent screen this browser shows for `id`. */
export async function decideOnPage(h: Harness, ws: string, jar: Jar, id: string, decision: "approve" | "deny"): Promise<Response> {
  const view = await viewOf(h, ws, jar, { d: id });
  if (view.kind !== "consent") throw new Error(`the page shows ${view.kind}, not the consent`);
  const res = await call(h, `/t/${ws}/device/decision`, { form: { d: id, csrf: view.csrf, decision }, ...browser(jar) });
  jar.take(res);
  return res;
}

/** A signed-in browser enters the code and approves (or denies). */
export async function userDecides(h: Harness, ws: string, userCode: string, decision: "approve" | "deny", jar?: Jar): Promise<{ jar: Jar; id: string }> {
  const b = jar ?? (await signedInBrowser(h, ws));
  const entered = await enterCode(h, ws, b, userCode);
  const id = pageId(entered);
  const res = await decideOnPage(h, ws, b, id, decision);
  if (res.status !== 303) throw new Error(`decision answered ${res.status}: ${await res.text()}`);
  return { jar: b, id };
}

export async function rowOf(h: Harness, id: string) {
  const [row] = await h.service.db.select().from(deviceAuthorizations).where(eq(deviceAuthorizations.id, id));
  return row;
}

export { ADA, API, SPA, WEB };
