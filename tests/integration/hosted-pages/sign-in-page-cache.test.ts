/**
 * The sign-in page's first step is rendered once per shape and then answered from the kept render
 * with each request's own values (lib/server/sign-in-page.ts, lib/hosted/page-template.ts), in
 * front of a stand-in for Next (tests/helpers/sign-in-pages.ts). Across two processes:
 * tests/integration/cache-invalidation.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../db/client";
import { contextFor, resolveWorkspace } from "../../../lib/server/router";
import { forgetWorkspace } from "../../../lib/service";
import { signInView } from "../../../lib/sign-in/view";
import { PAGE_TEMPLATE_TTL_MS } from "../../../lib/server/sign-in-page";
import { fillable, templateOf } from "../../../lib/hosted/page-template";
import { authorizeQuery, call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, SPA, WEB, standardWorkspace } from "../../helpers/fixtures";
import { challengeOf, pageServer, type PageServer } from "../../helpers/sign-in-pages";

const ws = uniqueWorkspaceId("kept");
const other = uniqueWorkspaceId("kept-other");
let h: Harness;
let pages: PageServer;

/** A new sign-in at `workspace` for `client`: its page path, its browser's cookie, its values. */
async function begin(workspace = ws, client = SPA) {
  const started = await call(h, `/t/${workspace}/oauth2/authorize?${authorizeQuery(client).query}`);
  expect(started.status).toBe(303);
  const jar = new Jar().take(started);
  const location = new URL(started.headers.get("location")!, PUBLIC_URL);
  const tx = location.searchParams.get("tx")!;
  const view = await signInView(contextFor(h.service, (await resolveWorkspace(h.service, workspace))!), tx, jar.header());
  if (view.kind !== "step") throw new Error("no sign-in step");
  return { path: `${location.pathname}${location.search}`, tx, cookie: jar.header(), csrf: view.csrf };
}

const nonceOf = (csp: string | string[] | undefined) => /'nonce-([^']+)'/.exec(String(csp))![1];

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
  await seed(h, standardWorkspace(other));
  pages = await pageServer(h.service);
});
afterAll(async () => pages.close());

describe("the sign-in page's kept render", () => {
  it("answers a second sign-in of the same shape without a render, with its own transaction, form token, challenge and nonce", async () => {
    const first = await begin();
    const a = await pages.get(first.path, { cookie: first.cookie });
    const rendered = pages.renders.length;
    expect(a.status).toBe(200);
    // The render got the very view the listener computed (and keyed by).
    expect(pages.renders.at(-1)).toMatchObject({ kind: "step", txId: first.tx, csrf: first.csrf });

    const second = await begin();
    const b = await pages.get(second.path, { cookie: second.cookie });
    expect(pages.renders.length).toBe(rendered);
    expect(b.status).toBe(200);
    expect(b.body).toContain(`name="tx" value="${second.tx}"`);
    expect(b.body).toContain(`name="csrf" value="${second.csrf}"`);
    for (const value of [first.tx, first.csrf, nonceOf(a.headers["content-security-policy"])]) expect(b.body).not.toContain(value);
    // The challenge is this sign-in's own: the one its view issued, not the first one's.
    const challenge = /data-challenge="([^"]*)"/.exec(b.body)![1];
    const firstChallenge = /data-challenge="([^"]*)"/.exec(a.body)![1];
    expect(challenge).not.toBe(firstChallenge);
    // A fresh nonce, the same in the policy, the preload header and the page's script.
    const nonce = nonceOf(b.headers["content-security-policy"]);
    expect(nonce).not.toBe(nonceOf(a.headers["content-security-policy"]));
    expect(b.headers.link).toContain(`nonce="${nonce}"`);
    expect(b.body).toContain(`<script nonce="${nonce}">`);
    // Everything else is the first page's bytes.
    const normal = (page: typeof a, values: string[]) => values.reduce((text, v, i) => text.replaceAll(v, `#${i}`), page.body);
    expect(normal(b, [second.tx, second.csrf, challenge, nonce])).toBe(normal(a, [first.tx, first.csrf, firstChallenge, nonceOf(a.headers["content-security-policy"])]));
    expect(b.headers["content-length"]).toBe(String(Buffer.byteLength(b.body)));
    expect(b.headers["x-request-id"]).toBeUndefined();
  });

  it("signs in with the values of a page answered from the kept render", async () => {
    const s = await begin();
    const page = await pages.get(s.path, { cookie: s.cookie });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1];
    const post = await call(h, `/t/${ws}/sign-in/password`, { form: { tx: s.tx, csrf, email: ADA.email, password: ADA.password }, cookie: s.cookie, headers: { origin: PUBLIC_URL } });
    expect(post.status).toBe(303);
    expect(new URL(post.headers.get("location")!).origin).toBe(new URL(SPA.redirect_uri).origin);
  });

  it("renders again for another language, another application, another workspace, another query and another encoding's first page", async () => {
    const warm = await begin();
    await pages.get(warm.path, { cookie: warm.cookie });
    const count = () => pages.renders.length;
    let before = count();
    const de = await begin();
    await pages.get(de.path, { cookie: de.cookie, "accept-language": "de" });
    expect(count()).toBe(before + 1);
    before = count();
    const web = await begin(ws, WEB);
    await pages.get(web.path, { cookie: web.cookie });
    expect(count()).toBe(before + 1);
    before = count();
    const elsewhere = await begin(other);
    const page = await pages.get(elsewhere.path, { cookie: elsewhere.cookie });
    expect(count()).toBe(before + 1);
    expect(page.body).toContain(elsewhere.tx);
    before = count();
    const withError = await begin();
    await pages.get(`${withError.path}&error=rate_limited`, { cookie: withError.cookie });
    expect(count()).toBe(before + 1);
    // A parameter the page does not read is Next's alone (it embeds the URL): rendered, never kept.
    before = count();
    const odd = await begin();
    const seen = await pages.get(`${odd.path}&utm=1`, { cookie: odd.cookie });
    expect(seen.status).toBe(404);
    expect(count()).toBe(before);
  });

  it("answers gzip from the kept render to a browser that takes it, the same page once decoded", async () => {
    const warm = await begin();
    const plain = await pages.get(warm.path, { cookie: warm.cookie });
    const before = pages.renders.length;
    const s = await begin();
    const zipped = await pages.get(s.path, { cookie: s.cookie, "accept-encoding": "gzip, deflate, br" });
    expect(pages.renders.length).toBe(before);
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(zipped.body.length).toBe(plain.body.length);
    expect(zipped.body).toContain(s.tx);
    // q=0 refuses it.
    const q0 = await begin();
    const refused = await pages.get(q0.path, { cookie: q0.cookie, "accept-encoding": "gzip;q=0" });
    expect(pages.renders.length).toBe(before);
    expect(refused.headers["content-encoding"]).toBeUndefined();
  });

  it("keeps nothing personal: after a wrong password the page (which shows the address again) is rendered every time", async () => {
    const s = await begin();
    const wrong = await call(h, `/t/${ws}/sign-in/password`, { form: { tx: s.tx, csrf: s.csrf, email: ADA.email, password: "not the password" }, cookie: s.cookie, headers: { origin: PUBLIC_URL } });
    expect(wrong.status).toBe(303);
    const path = `${s.path}&error=invalid_credentials`;
    const before = pages.renders.length;
    await pages.get(path, { cookie: s.cookie });
    await pages.get(path, { cookie: s.cookie });
    expect(pages.renders.length).toBe(before + 2);
    expect(pages.renders.at(-1)).toMatchObject({ kind: "step", enteredEmail: ADA.email });
  });

  it("renders for a transaction that is not this browser's (the page says it expired), and never keeps it", async () => {
    const s = await begin();
    const before = pages.renders.length;
    await pages.get(s.path, { cookie: "lk_tx_other=nothing" });
    await pages.get(s.path, { cookie: "lk_tx_other=nothing" });
    expect(pages.renders.length).toBe(before + 2);
    expect(pages.renders.at(-1)).toEqual({ kind: "expired" });
  });

  it("renders again once the workspace changes, and after its time whatever happens", async () => {
    const warm = await begin();
    await pages.get(warm.path, { cookie: warm.cookie });
    let before = pages.renders.length;
    forgetWorkspace(h.service, ws);
    const after = await begin();
    await pages.get(after.path, { cookie: after.cookie });
    expect(pages.renders.length).toBe(before + 1);
    // Kept again: the next one is not rendered.
    before = pages.renders.length;
    const kept = await begin();
    await pages.get(kept.path, { cookie: kept.cookie });
    expect(pages.renders.length).toBe(before);
    // A change heard of while a page renders: what it rendered may predate it, so it is not kept.
    forgetWorkspace(h.service, ws);
    pages.duringNextRender(() => forgetWorkspace(h.service, ws));
    const racing = await begin();
    await pages.get(racing.path, { cookie: racing.cookie });
    before = pages.renders.length;
    const next = await begin();
    await pages.get(next.path, { cookie: next.cookie });
    expect(pages.renders.length).toBe(before + 1);
    // The time bound (wall time: the kept render's age).
    const realNow = Date.now;
    try {
      Date.now = () => realNow() + PAGE_TEMPLATE_TTL_MS + 1;
      before = pages.renders.length;
      const late = await begin();
      await pages.get(late.path, { cookie: late.cookie });
      expect(pages.renders.length).toBe(before + 1);
    } finally {
      Date.now = realNow;
    }
  });

  it("answers the hosted page's 503 when the database cannot be asked for the view", async () => {
    const s = await begin();
    // Nothing listens on port 9: every query fails to connect.
    const unreachable = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:9/latchkey" });
    try {
      const broken = await pageServer({ ...h.service, db: unreachable.db, cache: new Map() });
      const page = await broken.get(s.path, { cookie: s.cookie });
      await broken.close();
      expect(page.status).toBe(503);
      expect(page.headers["retry-after"]).toBeTruthy();
      expect(page.headers["content-type"]).toContain("text/html");
      expect(broken.renders).toHaveLength(0);
    } finally {
      await unreachable.close();
    }
  });
});

describe("a page template", () => {
  const page = (body: string, headers: Record<string, string> = {}) => ({ status: 200, headers: { "content-type": "text/html", ...headers }, body: Buffer.from(body) });
  const values = ["AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"];

  it("is refused for a value the page does not hold, one inside another, a short or odd one, a cookie set, or a status other than 200", () => {
    expect(templateOf(page(`<p>${values[0]}</p>`), values)).toBeNull();
    expect(templateOf(page(`<p>${values[0]}${values[1]}</p>`), [values[0], `x${values[0]}x`.padEnd(30, "y")])).toBeNull();
    expect(templateOf(page("<p>short</p>"), ["short"])).toBeNull();
    expect(templateOf(page(`<p>${values[0]}<"x</p>`), [`${values[0]}<"x`])).toBeNull();
    expect(templateOf(page(`${values[0]}${values[1]}`, { "set-cookie": "a=b" }), values)).toBeNull();
    expect(templateOf({ ...page(`${values[0]}${values[1]}`), status: 404 }, values)).toBeNull();
    expect(templateOf(page(`${values[0]}${values[1]}`, { "content-type": "application/json" }), values)).toBeNull();
    expect(templateOf(page(`${values[0]} ${values[1]}`), values)).not.toBeNull();
  });

  it("is filled only with values of the lengths it was cut for", () => {
    const template = templateOf(page(`${values[0]} ${values[1]}`), values)!;
    expect(fillable(template, ["C".repeat(22), "D".repeat(32)])).toBe(true);
    expect(fillable(template, ["C".repeat(23), "D".repeat(32)])).toBe(false);
    expect(fillable(template, ["C".repeat(22)])).toBe(false);
  });
});
