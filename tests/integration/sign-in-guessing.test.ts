import { beforeAll, describe, expect, it } from "vitest";
import { authorizeQuery, call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, BOB, SPA, standardWorkspace } from "../helpers/fixtures";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { CLIENT_ADDRESS_HEADER } from "../../lib/http/client-address";
import { signInView } from "../../lib/sign-in/view";

// 3 failures per account and address per 5 minutes, so 9 per account per hour from all addresses.
const PER_ADDRESS = 3;
const PER_ACCOUNT = 9;
const HOUR = 3600_000;

let h: Harness;

beforeAll(async () => {
  h = await createHarness({ rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: PER_ADDRESS } });
});

async function workspace(): Promise<string> {
  const ws = uniqueWorkspaceId("guessing");
  await seed(h, standardWorkspace(ws));
  return ws;
}

/**
 * One sign-in through the hosted form from `address` in the browser `jar`: "signed-in", the
 * form's error code, or "skipped" when a live session skipped the form. `location` is the
 * answer with the transaction id masked, for comparing answers.
 */
async function attempt(ws: string, email: string, password: string, address: string, jar = new Jar()): Promise<{ outcome: string; location: string }> {
  const { query } = authorizeQuery({ ...SPA });
  const authorize = await call(h, `/t/${ws}/oauth2/authorize?${query}`, { cookie: jar.header(), headers: { [CLIENT_ADDRESS_HEADER]: address } });
  jar.take(authorize);
  const form = new URL(authorize.headers.get("location")!, PUBLIC_URL);
  if (form.pathname !== `/t/${ws}/sign-in`) return { outcome: "skipped", location: "" };
  const tx = form.searchParams.get("tx")!;
  const view = await signInView(contextFor(h.service, (await resolveWorkspace(h.service, ws))!), tx, jar.header());
  if (view.kind !== "step") throw new Error("the transaction expired");
  const res = await call(h, `/t/${ws}/sign-in/password`, {
    form: { tx, csrf: view.csrf, email, password },
    cookie: jar.header(),
    headers: { origin: PUBLIC_URL, [CLIENT_ADDRESS_HEADER]: address },
  });
  expect(res.status).toBe(303);
  jar.take(res);
  const location = new URL(res.headers.get("location")!, PUBLIC_URL);
  const outcome = location.origin === PUBLIC_URL ? (location.searchParams.get("error") ?? "?") : "signed-in";
  return { outcome, location: res.headers.get("location")!.replace(tx, "TX") };
}

/** `count` wrong passwords for `email`, each from a new address. */
async function guessFromManyAddresses(ws: string, email: string, count: number, net: string): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < count; i++) outcomes.push((await attempt(ws, email, "wrong password!", `${net}.${i}`)).outcome);
  return outcomes;
}

describe("password guessing across addresses", () => {
  it("slows guessing at one account from many addresses: a per-account ceiling per hour, then the owner gets in", async () => {
    const ws = await workspace();
    // One try per address: the per-address limit alone would never stop this.
    expect(await guessFromManyAddresses(ws, ADA.email, PER_ACCOUNT, "10.20.0")).toEqual(Array(PER_ACCOUNT).fill("invalid_credentials"));
    expect((await attempt(ws, ADA.email, "wrong password!", "10.20.1.1")).outcome).toBe("rate_limited");
    // No password is checked any more from a browser the account has not used, even the right one.
    expect((await attempt(ws, ADA.email, ADA.password, "10.20.1.2")).outcome).toBe("rate_limited");
    // Another account is not affected.
    expect((await attempt(ws, BOB.email, BOB.password, "10.20.1.3")).outcome).toBe("signed-in");
    // After the hour the owner's password works from anywhere.
    h.clock.advance(HOUR);
    expect((await attempt(ws, ADA.email, ADA.password, "10.20.1.4")).outcome).toBe("signed-in");
  });

  it("lets the owner in from a browser that signed in to the account before, even while the ceiling holds", async () => {
    const ws = await workspace();
    const owner = new Jar();
    expect((await attempt(ws, ADA.email, ADA.password, "10.30.0.1", owner)).outcome).toBe("signed-in");
    const other = new Jar();
    expect((await attempt(ws, BOB.email, BOB.password, "10.30.0.2", other)).outcome).toBe("signed-in");
    // The sessions end (12 hours idle); the browsers keep their cookies.
    h.clock.advance(13 * HOUR);
    await guessFromManyAddresses(ws, ADA.email, PER_ACCOUNT, "10.30.1");
    expect((await attempt(ws, ADA.email, ADA.password, "10.30.2.1")).outcome).toBe("rate_limited");
    // A session of another account proves nothing about this one.
    expect((await attempt(ws, ADA.email, ADA.password, "10.30.2.2", other)).outcome).toBe("rate_limited");
    // The owner's browser, from a new address, with the right password.
    expect((await attempt(ws, ADA.email, ADA.password, "10.30.2.3", owner)).outcome).toBe("signed-in");
  });

  it("limits a known browser on its own: its failures per 5 minutes, from any address", async () => {
    const ws = await workspace();
    const owner = new Jar();
    expect((await attempt(ws, ADA.email, ADA.password, "10.35.0.1", owner)).outcome).toBe("signed-in");
    h.clock.advance(13 * HOUR);
    await guessFromManyAddresses(ws, ADA.email, PER_ACCOUNT, "10.35.1");
    const outcomes: string[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) outcomes.push((await attempt(ws, ADA.email, "wrong password!", `10.35.2.${i}`, owner)).outcome);
    expect(outcomes).toEqual(Array(PER_ADDRESS).fill("invalid_credentials"));
    expect((await attempt(ws, ADA.email, ADA.password, "10.35.3.1", owner)).outcome).toBe("rate_limited");
    h.clock.advance(5 * 60_000);
    expect((await attempt(ws, ADA.email, ADA.password, "10.35.3.2", owner)).outcome).toBe("signed-in");
  });

  it("answers an unknown email exactly as a known one, before and after the ceiling", async () => {
    const ws = await workspace();
    const known: string[] = [];
    const unknown: string[] = [];
    for (let i = 0; i < PER_ACCOUNT + 2; i++) {
      known.push((await attempt(ws, ADA.email, "wrong password!", `10.40.0.${i}`)).location);
      unknown.push((await attempt(ws, "nobody@example.test", "wrong password!", `10.40.1.${i}`)).location);
    }
    expect(unknown).toEqual(known);
    expect(known.slice(PER_ACCOUNT)).toEqual(Array(2).fill(`/t/${ws}/sign-in?tx=TX&error=rate_limited`));
  });
});
