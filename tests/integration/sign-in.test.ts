import { beforeAll, describe, expect, it } from "vitest";
import { authorizeQuery, call, createHarness, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, BOB, SPA, standardWorkspace } from "../helpers/fixtures";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { signInView } from "../../lib/sign-in/view";
import { eq } from "drizzle-orm";
import { authorizationCodes, hostedSessions } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import { readSessionCookie } from "../../lib/authn/hosted-session";
import { createService } from "../../lib/service";
import { CLIENT_ADDRESS_HEADER } from "../../lib/http/client-address";

let h: Harness;
const ws = uniqueWorkspaceId("signin");
const issuer = `${PUBLIC_URL}/t/${ws}`;
const HOUR = 3600_000;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

async function startTransaction(jar = new Jar()) {
  const { query, state } = authorizeQuery({ ...SPA });
  const res = await call(h, `/t/${ws}/oauth2/authorize?${query}`, { cookie: jar.header() });
  jar.take(res);
  const location = new URL(res.headers.get("location")!, PUBLIC_URL);
  const tx = location.searchParams.get("tx");
  const view = tx ? await signInView(contextFor(h.service, (await resolveWorkspace(h.service, ws))!), tx, jar.header()) : null;
  return { res, location, tx, jar, state, csrf: view && view.kind === "step" ? view.csrf : "" };
}

const post = (form: Record<string, string>, cookie: string, headers: Record<string, string> = { origin: PUBLIC_URL }) =>
  call(h, `/t/${ws}/sign-in/password`, { form, cookie, headers });

describe("hosted password sign-in", () => {
  it("creates the hosted session cookie and redirects with exactly code, state and iss", async () => {
    const { tx, jar, csrf, state } = await startTransaction();
    const res = await post({ tx: tx!, csrf, email: ADA.email, password: ADA.password }, jar.header());
    expect(res.status).toBe(303);
    const callback = new URL(res.headers.get("location")!);
    expect(callback.origin + callback.pathname).toBe(SPA.redirect_uri);
    expect([...callback.searchParams.keys()].sort()).toEqual(["code", "iss", "state"]);
    expect(callback.searchParams.get("state")).toBe(state);
    expect(callback.searchParams.get("iss")).toBe(issuer);
    const session = res.headers.getSetCookie().find((c) => c.startsWith("lk_session="))!;
    expect(session).toMatch(new RegExp(`Path=/t/${ws}(;|$)`));
    for (const attr of ["Secure", "HttpOnly", "SameSite=Lax"]) expect(session).toContain(attr);
  });

  it("stores only the SHA-256 of the authorization code and of the hosted session's secret", async () => {
    const { callback, jar } = await signIn(h, ws, { ...SPA, ...ADA });
    const code = callback.searchParams.get("code")!;
    const [byHash] = await h.service.db.select().from(authorizationCodes).where(eq(authorizationCodes.codeHash, sha256Hex(code)));
    expect(byHash).toBeDefined();
    expect(JSON.stringify(byHash)).not.toContain(code);
    const cookie = readSessionCookie(`lk_session=${jar.get("lk_session")}`)!;
    const [session] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, cookie.id));
    expect(session.secretHash).toBe(sha256Hex(cookie.secret));
    expect(JSON.stringify(session)).not.toContain(cookie.secret);
  });

  it("accepts the email case-insensitively", async () => {
    const { tx, jar, csrf } = await startTransaction();
    const res = await post({ tx: tx!, csrf, email: ADA.email.toUpperCase(), password: ADA.password }, jar.header());
    expect(new URL(res.headers.get("location")!).searchParams.get("code")).toBeTruthy();
  });

  it("accepts every spelling of the address: upper case, the domain's trailing dot, surrounding spaces", async () => {
    for (const email of [` ${ADA.email.toUpperCase()}. `, `${ADA.email}.`]) {
      const { tx, jar, csrf } = await startTransaction();
      const res = await post({ tx: tx!, csrf, email, password: ADA.password }, jar.header());
      expect(new URL(res.headers.get("location")!).searchParams.get("code"), email).toBeTruthy();
    }
  });

  it("answers an unknown email and a wrong password identically", async () => {
    const a = await startTransaction();
    const wrong = await post({ tx: a.tx!, csrf: a.csrf, email: ADA.email, password: "wrong password!" }, a.jar.header());
    const b = await startTransaction();
    const unknown = await post({ tx: b.tx!, csrf: b.csrf, email: "nobody@example.test", password: "wrong password!" }, b.jar.header());
    expect(wrong.status).toBe(303);
    expect(unknown.status).toBe(303);
    const normalize = (res: Response, tx: string) => res.headers.get("location")!.replace(tx, "TX");
    expect(normalize(wrong, a.tx!)).toBe(normalize(unknown, b.tx!));
    expect(normalize(wrong, a.tx!)).toBe(`/t/${ws}/sign-in?tx=TX&error=invalid_credentials`);
    expect(wrong.headers.getSetCookie()).toEqual([]);
    expect(unknown.headers.getSetCookie()).toEqual([]);
  });

  it("refuses a disabled user with the same answer", async () => {
    const doc = standardWorkspace(ws);
    doc.users[1] = { ...doc.users[1], status: "disabled" };
    await seed(h, doc);
    const t = await startTransaction();
    const res = await post({ tx: t.tx!, csrf: t.csrf, email: BOB.email, password: BOB.password }, t.jar.header());
    expect(res.headers.get("location")).toBe(`/t/${ws}/sign-in?tx=${t.tx}&error=invalid_credentials`);
    await seed(h, standardWorkspace(ws));
  });

  it("rejects a wrong CSRF token", async () => {
    const t = await startTransaction();
    const res = await post({ tx: t.tx!, csrf: "forged", email: ADA.email, password: ADA.password }, t.jar.header());
    expect(res.status).toBe(403);
    expect(res.headers.get("location")).toBeNull();
  });

  it("rejects a post from another origin", async () => {
    const t = await startTransaction();
    const res = await post({ tx: t.tx!, csrf: t.csrf, email: ADA.email, password: ADA.password }, t.jar.header(), { origin: "https://evil.example" });
    expect(res.status).toBe(403);
  });

  it("accepts what a browser sends under the no-referrer policy: Origin null, Sec-Fetch-Site same-origin", async () => {
    const t = await startTransaction();
    const res = await post({ tx: t.tx!, csrf: t.csrf, email: ADA.email, password: ADA.password }, t.jar.header(), { origin: "null", "sec-fetch-site": "same-origin" });
    expect(res.status).toBe(303);
    expect(new URL(res.headers.get("location")!).searchParams.get("code")).toBeTruthy();
  });

  it("rejects a cross-site post even when its Origin is null", async () => {
    const t = await startTransaction();
    const res = await post({ tx: t.tx!, csrf: t.csrf, email: ADA.email, password: ADA.password }, t.jar.header(), { origin: "null", "sec-fetch-site": "cross-site" });
    expect(res.status).toBe(403);
  });

  it("rejects a post that says neither where it came from (no Sec-Fetch-Site, no Origin), and Origin null alone", async () => {
    for (const headers of [{}, { origin: "null" }] as Record<string, string>[]) {
      const t = await startTransaction();
      const res = await post({ tx: t.tx!, csrf: t.csrf, email: ADA.email, password: ADA.password }, t.jar.header(), headers);
      expect(res.status).toBe(403);
      expect(await res.text()).toContain("This form was submitted from another site.");
    }
  });

  it("rejects a CSRF token made for another transaction of the same browser", async () => {
    const jar = new Jar();
    const first = await startTransaction(jar);
    const second = await startTransaction(jar);
    expect(first.tx).not.toBe(second.tx);
    const res = await post({ tx: second.tx!, csrf: first.csrf, email: ADA.email, password: ADA.password }, jar.header());
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("The form could not be verified. Reload the page and try again.");
    // The right token still works for that transaction: only the binding was wrong.
    const ok = await post({ tx: second.tx!, csrf: second.csrf, email: ADA.email, password: ADA.password }, jar.header());
    expect(ok.status).toBe(303);
  });

  it("rejects a post without the transaction's browser cookie", async () => {
    const t = await startTransaction();
    const res = await post({ tx: t.tx!, csrf: t.csrf, email: ADA.email, password: ADA.password }, "");
    expect(res.status).toBe(400);
  });

  it("completes a transaction only once", async () => {
    const t = await startTransaction();
    const first = await post({ tx: t.tx!, csrf: t.csrf, email: ADA.email, password: ADA.password }, t.jar.header());
    expect(first.status).toBe(303);
    const again = await post({ tx: t.tx!, csrf: t.csrf, email: ADA.email, password: ADA.password }, t.jar.header());
    // Only to the page that says the sign-in is done: no second code.
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe(`/t/${ws}/sign-in?tx=${t.tx}`);
    expect(again.headers.get("location")).not.toContain("code=");
  });

  it("rejects a non-form body with 415", async () => {
    const t = await startTransaction();
    const res = await call(h, `/t/${ws}/sign-in/password`, { body: "{}", headers: { "content-type": "application/json", origin: PUBLIC_URL }, cookie: t.jar.header() });
    expect(res.status).toBe(415);
  });
});

describe("password hashes made with other parameters", () => {
  it("are replaced at the next successful sign-in, with today's parameters, and keep working", async () => {
    const { hash } = await import("@node-rs/argon2");
    const { needsRehash } = await import("../../lib/authn/password");
    const { and } = await import("drizzle-orm");
    const { users } = await import("../../db/schema");
    const bob = and(eq(users.workspaceId, ws), eq(users.emailNormalized, BOB.email));
    // As an older release (or a cheaper setting) would have stored it.
    const old = await hash(BOB.password, { algorithm: 2, memoryCost: 4096, timeCost: 3, parallelism: 1 });
    await h.service.db.update(users).set({ passwordHash: old }).where(bob);
    expect(needsRehash(old)).toBe(true);

    // A wrong password changes nothing.
    let t = await startTransaction();
    await post({ tx: t.tx!, csrf: t.csrf, email: BOB.email, password: "not the password" }, t.jar.header());
    expect((await h.service.db.select({ passwordHash: users.passwordHash }).from(users).where(bob))[0].passwordHash).toBe(old);

    t = await startTransaction();
    const res = await post({ tx: t.tx!, csrf: t.csrf, email: BOB.email, password: BOB.password }, t.jar.header());
    expect(new URL(res.headers.get("location")!).origin).not.toBe(PUBLIC_URL);
    const [{ passwordHash }] = await h.service.db.select({ passwordHash: users.passwordHash }).from(users).where(bob);
    expect(passwordHash).not.toBe(old);
    expect(passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(needsRehash(passwordHash!)).toBe(false);
    const again = await startTransaction();
    const second = await post({ tx: again.tx!, csrf: again.csrf, email: BOB.email, password: BOB.password }, again.jar.header());
    expect(new URL(second.headers.get("location")!).origin).not.toBe(PUBLIC_URL);
  });
});

describe("text the database cannot hold", () => {
  it("answers an email with a NUL byte as wrong credentials, without a 500", async () => {
    const t = await startTransaction();
    const res = await call(h, `/t/${ws}/sign-in/password`, {
      form: `tx=${t.tx}&csrf=${encodeURIComponent(t.csrf)}&email=a%00b%40example.test&password=whatever+it+is`,
      cookie: t.jar.header(),
      headers: { origin: PUBLIC_URL },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/t/${ws}/sign-in?tx=${t.tx}&error=invalid_credentials`);
  });

  it("answers a transaction id with a NUL byte as an expired sign-in", async () => {
    const t = await startTransaction();
    const res = await call(h, `/t/${ws}/sign-in/password`, {
      form: `tx=a%00b&csrf=${encodeURIComponent(t.csrf)}&email=${encodeURIComponent(ADA.email)}&password=x`,
      cookie: t.jar.header(),
      headers: { origin: PUBLIC_URL },
    });
    expect(res.status).toBe(400);
    const view = await signInView(contextFor(h.service, (await resolveWorkspace(h.service, ws))!), "a\u0000b", t.jar.header());
    expect(view.kind).toBe("expired");
  });
});

describe("the address a session records", () => {
  async function signInFrom(harness: Harness, headers: Record<string, string>): Promise<string | null> {
    const t = await startTransaction();
    const res = await call(harness, `/t/${ws}/sign-in/password`, {
      form: { tx: t.tx!, csrf: t.csrf, email: ADA.email, password: ADA.password },
      cookie: t.jar.header(),
      headers: { origin: PUBLIC_URL, ...headers },
    });
    expect(res.status).toBe(303);
    const id = new Jar().take(res).get("lk_session")!.split(".")[0];
    const [row] = await h.service.db.select({ ip: hostedSessions.ip }).from(hostedSessions).where(eq(hostedSessions.id, id));
    return row.ip;
  }
  const headers = { [CLIENT_ADDRESS_HEADER]: "10.60.0.1", "x-forwarded-for": "203.0.113.7, 10.60.0.1" };

  it("is the socket address when TRUST_PROXY is off, whatever X-Forwarded-For says", async () => {
    expect(await signInFrom(h, headers)).toBe("10.60.0.1");
  });

  it("is the left-most X-Forwarded-For entry when TRUST_PROXY is on", async () => {
    const proxied = { ...h, service: createService(h.service.db, { ...h.service.config, trustProxy: true }, h.clock) };
    expect(await signInFrom(proxied, headers)).toBe("203.0.113.7");
    // Text that is not an address is ignored: the socket address again.
    expect(await signInFrom(proxied, { [CLIENT_ADDRESS_HEADER]: "10.60.0.1", "x-forwarded-for": "not-an-address" })).toBe("10.60.0.1");
  });
});

describe("the hosted session", () => {
  it("skips the form while live", async () => {
    const first = await signIn(h, ws, { ...SPA, ...ADA });
    const again = await startTransaction(first.jar);
    expect(again.res.status).toBe(303);
    const callback = new URL(again.res.headers.get("location")!);
    expect(callback.origin + callback.pathname).toBe(SPA.redirect_uri);
    expect(callback.searchParams.get("code")).toBeTruthy();
  });

  it("ends after 12 hours idle", async () => {
    const { jar } = await signIn(h, ws, { ...SPA, ...ADA });
    h.clock.advance(12 * HOUR + 1000);
    const again = await startTransaction(jar);
    expect(again.location.pathname).toBe(`/t/${ws}/sign-in`);
  });

  it("slides with use but ends 7 days after sign-in regardless", async () => {
    const { jar } = await signIn(h, ws, { ...SPA, ...ADA });
    for (let i = 0; i < 15; i++) {
      h.clock.advance(11 * HOUR);
      const again = await startTransaction(jar);
      expect(again.location.pathname).not.toBe(`/t/${ws}/sign-in`);
    }
    // 165 hours used; at 7 days (168 h) the absolute limit ends it even though it was used recently.
    h.clock.advance(11 * HOUR);
    const after = await startTransaction(jar);
    expect(after.location.pathname).toBe(`/t/${ws}/sign-in`);
  });
});
