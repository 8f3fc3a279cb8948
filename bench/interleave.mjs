// Before/after comparison that survives this machine's drift: two servers (two commits), each
// started with `node bench/run.mjs --serve --port P` from its own checkout, each on a fresh
// database given as DATABASE_URL, and the same MASTER_KEY. Each scenario is measured in short
// slices, alternating between the two servers (A B, then B A, ...), so both see the same
// machine; the answer is the median of the per-round ratios B/A, for throughput and for the
// server's CPU time per request (from /proc).
//
//   MASTER_KEY=<hex> node bench/interleave.mjs \
//     'A=3500:<pid>:postgres://postgres@127.0.0.1:5432/ab_a' 'B=3600:<pid>:postgres://postgres@127.0.0.1:5432/ab_b' \
//     [cc,introspect,session,check-allowed,userinfo,refresh]
//
// ROUNDS (8) slices of SLICE (3) seconds per server and scenario, 32 connections. Start both
// servers at the same time: a server whose database has served longer is slower (measured: a
// fresh server of the same commit ran 12-28% faster than one that had served several runs).
import autocannon from "autocannon";
import postgres from "postgres";
import { cpuDelta, cpuSnapshot } from "./lib/proc.mjs";
import { SCENARIOS } from "./lib/scenarios.mjs";
import { grantOf, Human } from "./lib/seed.mjs";

const [, , a, b, list] = process.argv;
const parse = (arg) => {
  const [name, rest] = arg.split("=");
  const [port, pid, ...db] = rest.split(":");
  return { name, port: Number(port), pid: Number(pid), db: db.join(":") };
};
if (!a || !b || !process.env.MASTER_KEY) {
  console.error("usage: MASTER_KEY=<hex> node bench/interleave.mjs 'A=<port>:<pid>:<database url>' 'B=<port>:<pid>:<database url>' [scenarios]");
  process.exit(2);
}
const sides = [parse(a), parse(b)];
const names = (list ?? "cc,introspect,session,check-allowed,userinfo,refresh").split(",");
const ROUNDS = Number(process.env.ROUNDS ?? 8);
const SLICE = Number(process.env.SLICE ?? 3);
// Enough seeded one-time proofs (refresh tokens) for every slice.
const opts = { warmup: 2 + ROUNDS * SLICE, duration: 0, connections: 32 };

function cannon(url, sc, duration) {
  let bad = 0;
  const request = {
    ...sc.req,
    onResponse(status, body, _ctx, headers) {
      if (status !== sc.expectStatus || !sc.check(body, headers)) bad++;
    },
  };
  if (sc.perRequest) {
    request.setupRequest = (r) => {
      const next = sc.perRequest();
      return next ? { ...r, ...next, headers: { ...r.headers, ...next.headers } } : r;
    };
  }
  return new Promise((resolve, reject) =>
    autocannon({ url, connections: opts.connections, duration, pipelining: 1, timeout: 10, requests: [request] }, (error, result) =>
      error ? reject(error) : resolve({ result, bad }),
    ),
  );
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const envs = [];
for (const side of sides) {
  const base = `http://127.0.0.1:${side.port}`;
  const human = new Human({
    base,
    workspace: "bench",
    client: { id: "web", secret: "bench-web-secret-0123456789abcdef0123456789", redirectUri: "http://127.0.0.1:9/callback" },
    user: { email: "ada@bench.example", password: "correct horse battery staple" },
    scope: "openid email profile read:things",
    resource: "https://api.example.com",
  });
  await human.signIn();
  const sql = postgres(side.db, { max: 2, onnotice: () => {} });
  const env = {
    base,
    prefix: "/t/bench",
    issuer: `${base}/t/bench`,
    resource: "https://api.example.com",
    m2m: { id: "m2m", secret: "bench-m2m-secret-0123456789abcdef0123456789" },
    human,
    sql,
    template: await grantOf(sql, human.refreshToken),
    masterKeyHex: process.env.MASTER_KEY,
    opts,
  };
  envs.push({ side, env });
}

const results = {};
console.log(`| scenario | ${sides[0].name} req/s | ${sides[1].name} req/s | ${sides[1].name}/${sides[0].name} req/s | ${sides[0].name} µs CPU/req | ${sides[1].name} µs CPU/req | ${sides[1].name}/${sides[0].name} CPU/req | failed |`);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
for (const name of names) {
  const def = SCENARIOS.find((d) => d.name === name);
  if (!def) throw new Error(`unknown scenario ${name}`);
  const prepared = [];
  for (const { env } of envs) prepared.push(await def.prepare(env));
  for (let i = 0; i < envs.length; i++) await cannon(envs[i].env.base, prepared[i], 2); // warm-up
  const rows = [[], []];
  for (let round = 0; round < ROUNDS; round++) {
    for (const i of round % 2 ? [1, 0] : [0, 1]) {
      const watch = { server: envs[i].side.pid };
      const c0 = cpuSnapshot(watch);
      const { result, bad } = await cannon(envs[i].env.base, prepared[i], SLICE);
      const c1 = cpuSnapshot(watch);
      const cpuShare = cpuDelta(c0, c1).server / 100; // cores busy over the slice
      rows[i].push({ rps: result.requests.average, us: (cpuShare * SLICE * 1e6) / Math.max(1, result.requests.total), failed: bad + result.errors });
    }
  }
  const r = {
    rps: rows.map((xs) => median(xs.map((x) => x.rps))),
    us: rows.map((xs) => median(xs.map((x) => x.us))),
    ratioRps: median(rows[1].map((x, k) => x.rps / rows[0][k].rps)),
    ratioUs: median(rows[1].map((x, k) => x.us / rows[0][k].us)),
    failed: rows.flat().reduce((n, x) => n + x.failed, 0),
  };
  results[name] = r;
  console.log(`| ${name} | ${r.rps[0].toFixed(0)} | ${r.rps[1].toFixed(0)} | ${r.ratioRps.toFixed(3)} | ${r.us[0].toFixed(0)} | ${r.us[1].toFixed(0)} | ${r.ratioUs.toFixed(3)} | ${r.failed} |`);
}
for (const { env } of envs) await env.sql.end({ timeout: 5 });
if (process.env.INTERLEAVE_JSON) (await import("node:fs")).writeFileSync(process.env.INTERLEAVE_JSON, JSON.stringify(results, null, 2));
