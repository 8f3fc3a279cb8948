#!/usr/bin/env node
// A normal user's password sign-in while a password flood runs (docs/performance.md), in
// one process and without a build: the real endpoints through the route table (`dispatch`, as the
// production listener and Next's route handlers call them) over a throwaway PostgreSQL database.
//
//   node --import tsx bench/signin-flood.mjs                       # 4 addresses, 256 posts in flight, 20 s
//   node --import tsx bench/signin-flood.mjs -a 4 -n 256 -d 20 -w 5
//   node --import tsx bench/signin-flood.mjs --root /tmp/older     # another checkout's lib/ (git archive <commit>)
//   node --import tsx bench/signin-flood.mjs --one-64              # 64 addresses of one IPv6 /64 behind a trusted proxy
//
// The flood: `--in-flight` posts at all times, spread over `--addresses` client addresses, each a
// wrong password for an email nobody has (a new one per post: the per-email limits never meet
// it), each post sent again as soon as it is answered. The normal user: from another address,
// one sign-in after another (GET /oauth2/authorize, the page's CSRF token, POST /sign-in/password
// with the right password); the POST's latency is what is reported (p50, p95, max), with how
// many of its answers were not the client's callback. The guessing limits and the request limiter
// are off (RATE_LIMIT_PER_MINUTE=0, RATE_LIMIT_FAILURES=0), as in `npm run bench`: only the
// hashing queue stands between the flood and the user. Not measured here: HTTP parsing and Next
// (the hosted form posts go through Next's route handlers in production); `npm run bench --
// -s signin-flood` measures the same shape against the production server.
//
// `--one-64`: the flood comes from 64 addresses of one IPv6 /64 (2001:db8:66:1::1 to ::40), 4
// posts in flight each unless -a/-n say otherwise, and the user from another /64; every address
// is sent as X-Forwarded-For through a trusted proxy (TRUST_PROXY=true, the proxy at 127.0.0.1).
import { randomBytes, createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { openDatabaseTarget, root as thisCheckout } from "./lib/stack.mjs";

const { values: opts } = parseArgs({
  options: {
    addresses: { type: "string", short: "a" },
    "in-flight": { type: "string", short: "n", default: "256" },
    "one-64": { type: "boolean", default: false },
    duration: { type: "string", short: "d", default: "20" },
    warmup: { type: "string", short: "w", default: "5" },
    root: { type: "string" },
    json: { type: "boolean", default: false },
  },
});
const ONE_64 = opts["one-64"];
const ADDRESSES = Number(opts.addresses ?? (ONE_64 ? 64 : 4));
const IN_FLIGHT = Number(opts["in-flight"]);
const DURATION_MS = Number(opts.duration) * 1000;
const WARMUP_MS = Number(opts.warmup) * 1000;
const checkout = path.resolve(opts.root ?? thisCheckout);
const log = (m) => console.log(`[signin-flood] ${m}`);
const load = (file) => import(pathToFileURL(path.join(checkout, file)).href);

const { openDatabase, runMigrations } = await load("db/client.ts");
const { loadConfig } = await load("lib/config.ts");
const { createService } = await load("lib/service.ts");
const { contextFor, dispatch, resolveWorkspace } = await load("lib/server/router.ts");
const { importWorkspace } = await load("lib/workspaces/file.ts");
const { signInView } = await load("lib/sign-in/view.ts");
const { CLIENT_ADDRESS_HEADER } = await load("lib/http/client-address.ts");

const PUBLIC_URL = "http://127.0.0.1:3400";
const WORKSPACE = "bench";
const CLIENT = { id: "web", redirectUri: "http://127.0.0.1:9/callback" };
const USER = { email: "ada@bench.example", password: "correct horse battery staple" };
const USER_ADDRESS = ONE_64 ? "2001:db8:77:1::100" : "10.77.0.100";
const floodAddress = (i) => (ONE_64 ? `2001:db8:66:1::${(i + 1).toString(16)}` : `10.66.0.${i + 1}`);
/** With --one-64 the addresses come from a trusted proxy's X-Forwarded-For; otherwise as the listener stamps the socket's. */
const PROXY_ADDRESS = "127.0.0.1";

const b64url = (bytes) => randomBytes(bytes).toString("base64url");

function cookiesOf(response) {
  return response.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
}

function requestFor(pathAndQuery, { method = "GET", form, cookie, address }) {
  const headers = new Headers(ONE_64 ? { [CLIENT_ADDRESS_HEADER]: PROXY_ADDRESS, "x-forwarded-for": address, origin: PUBLIC_URL } : { [CLIENT_ADDRESS_HEADER]: address, origin: PUBLIC_URL });
  if (cookie) headers.set("cookie", cookie);
  let body;
  if (form) {
    body = new URLSearchParams(form).toString();
    headers.set("content-type", "application/x-www-form-urlencoded");
  }
  return new Request(`${PUBLIC_URL}/t/${WORKSPACE}${pathAndQuery}`, { method, headers, body });
}

async function send(service, request) {
  const response = await dispatch(request, service);
  if (!response) throw new Error(`${request.url}: not in the route table`);
  return response;
}

const call = (service, pathAndQuery, options) => send(service, requestFor(pathAndQuery, options));

/** GET /oauth2/authorize from `address`: the transaction, its browser cookie and the form's CSRF token. */
async function openSignIn(service, ctx, address) {
  const verifier = b64url(32);
  const query = new URLSearchParams({
    response_type: "code",
    client_id: CLIENT.id,
    redirect_uri: CLIENT.redirectUri,
    scope: "openid email profile read:things",
    state: b64url(24),
    nonce: b64url(24),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource: "https://api.example.com",
  });
  const res = await call(service, `/oauth2/authorize?${query}`, { address });
  const location = new URL(res.headers.get("location") ?? "", PUBLIC_URL);
  const tx = location.searchParams.get("tx");
  if (res.status !== 303 || !tx) throw new Error(`authorize answered ${res.status} ${location} ${await res.text()}`);
  const cookie = cookiesOf(res);
  const view = await signInView(ctx, tx, cookie);
  if (view.kind !== "step") throw new Error("the transaction is not at a step");
  return { tx, cookie, csrf: view.csrf };
}

/** Where a password POST sent the browser: "signed-in" (the client's callback) or the form's error. */
function outcomeOf(res) {
  const location = res.headers.get("location") ?? "";
  if (res.status !== 303) return `status ${res.status}`;
  if (location.startsWith(CLIENT.redirectUri)) return "signed-in";
  return new URL(location, PUBLIC_URL).searchParams.get("error") ?? "?";
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  const database = await openDatabaseTarget(log);
  try {
    const masterKey = randomBytes(32).toString("hex");
    const config = loadConfig({
      DATABASE_URL: database.url,
      MASTER_KEY: masterKey,
      PUBLIC_URL,
      RATE_LIMIT_PER_MINUTE: "0",
      RATE_LIMIT_FAILURES: "0",
      ...(ONE_64 ? { TRUST_PROXY: "true" } : {}),
    });
    const handle = await openDatabase({ databaseUrl: database.url, poolSize: 10 });
    await runMigrations(handle, database.url);
    const service = createService(handle.db, config);
    await importWorkspace(handle.db, JSON.parse(readFileSync(path.join(thisCheckout, "bench", "workspace.json"), "utf8")), { masterKey: config.masterKey, clock: service.clock });
    const ctx = contextFor(service, await resolveWorkspace(service, WORKSPACE));
    log(`lib/ from ${checkout}; ${ADDRESSES} flooding addresses${ONE_64 ? " of one IPv6 /64 (X-Forwarded-For)" : ""}, ${IN_FLIGHT} posts in flight, warm-up ${WARMUP_MS / 1000} s, measured ${DURATION_MS / 1000} s`);

    // The flood's transactions: a failed password leaves its transaction open, so each connection keeps one.
    const floods = [];
    for (let i = 0; i < IN_FLIGHT; i++) floods.push({ address: floodAddress(i % ADDRESSES), ...(await openSignIn(service, ctx, floodAddress(i % ADDRESSES))) });

    let stop = false;
    let measuring = false;
    const flood = { posts: 0, outcomes: {} };
    let n = 0;
    const floodLoop = async (f) => {
      let request = null;
      while (!stop) {
        // A post the server refused unread is sent again as it is (building a Request is the
        // client's cost, not the server's); one whose form was read gets a new email.
        if (!request || request.bodyUsed) {
          request = requestFor("/sign-in/password", {
            method: "POST",
            form: { tx: f.tx, csrf: f.csrf, email: `flood-${++n}@nowhere.example`, password: "not the password" },
            cookie: f.cookie,
            address: f.address,
          });
        }
        const res = await send(service, request);
        if (measuring) {
          const o = outcomeOf(res);
          flood.posts++;
          flood.outcomes[o] = (flood.outcomes[o] ?? 0) + 1;
        }
        // The next post arrives as a network event would: after the I/O already waiting (a refusal
        // is answered without any I/O, so back-to-back posts would otherwise starve the database's answers).
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const user = { latencies: [], outcomes: {} };
    const userLoop = async () => {
      while (!stop) {
        const s = await openSignIn(service, ctx, USER_ADDRESS);
        const started = performance.now();
        const res = await call(service, "/sign-in/password", {
          method: "POST",
          form: { tx: s.tx, csrf: s.csrf, email: USER.email, password: USER.password },
          cookie: s.cookie,
          address: USER_ADDRESS,
        });
        const ms = performance.now() - started;
        if (measuring && !stop) {
          const o = outcomeOf(res);
          user.latencies.push(ms);
          user.outcomes[o] = (user.outcomes[o] ?? 0) + 1;
        }
      }
    };

    // The user alone first: the latency without the flood, for comparison.
    const alone = { latencies: [], outcomes: {} };
    for (let i = 0; i < 20; i++) {
      const s = await openSignIn(service, ctx, USER_ADDRESS);
      const started = performance.now();
      const res = await call(service, "/sign-in/password", { method: "POST", form: { tx: s.tx, csrf: s.csrf, email: USER.email, password: USER.password }, cookie: s.cookie, address: USER_ADDRESS });
      alone.latencies.push(performance.now() - started);
      alone.outcomes[outcomeOf(res)] = (alone.outcomes[outcomeOf(res)] ?? 0) + 1;
    }

    const loops = [...floods.map(floodLoop), userLoop()];
    await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
    measuring = true;
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, DURATION_MS));
    measuring = false;
    const seconds = (performance.now() - started) / 1000;
    stop = true;
    await Promise.all(loops);

    const summary = (s) => {
      const sorted = [...s.latencies].sort((a, b) => a - b);
      return { sign_ins: sorted.length, p50_ms: Math.round(percentile(sorted, 50)), p95_ms: Math.round(percentile(sorted, 95)), max_ms: Math.round(sorted.at(-1) ?? NaN), outcomes: s.outcomes };
    };
    const result = {
      checkout,
      scenario: ONE_64 ? "one-64" : "addresses",
      addresses: ADDRESSES,
      in_flight: IN_FLIGHT,
      seconds: Number(seconds.toFixed(1)),
      user_alone: summary(alone),
      user_during_flood: summary(user),
      flood: { posts_per_second: Math.round(flood.posts / seconds), outcomes: flood.outcomes },
    };
    if (opts.json) console.log(JSON.stringify(result));
    else {
      const u = result.user_during_flood;
      const a = result.user_alone;
      log(`user alone:        p50 ${a.p50_ms} ms, p95 ${a.p95_ms} ms (${a.sign_ins} sign-ins)`);
      log(`user during flood: p50 ${u.p50_ms} ms, p95 ${u.p95_ms} ms, max ${u.max_ms} ms (${u.sign_ins} sign-ins: ${JSON.stringify(u.outcomes)})`);
      log(`flood: ${result.flood.posts_per_second} posts/s answered ${JSON.stringify(flood.outcomes)}`);
      log(`target p95 < 1000 ms: ${u.p95_ms < 1000 && u.sign_ins > 0 ? "met" : "MISSED"}`);
    }
    await handle.close();
  } finally {
    await database.drop();
  }
}

await main();
