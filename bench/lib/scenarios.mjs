// The benchmark's scenarios: what each request is, and how its answer is checked. Each
// `prepare(env)` returns the autocannon request, the expected status and a body/header check;
// scenarios that consume a one-time proof also return `perRequest()`, which hands out a fresh
// one per request (and null when the seeded supply is exhausted, which then shows as failures).
import { basic, FORM, seedCodes, seedRefreshTokens, seedScimDirectory, seedTransactions } from "./seed.mjs";
import { boundAccessToken, DpopKey } from "./dpop.mjs";

const JSON_TYPE = "application/json";

/** Hands out the items of `list` once each; null when they run out. */
function supply(list, format) {
  let i = 0;
  const next = () => (i < list.length ? format(list[i++]) : null);
  next.used = () => i;
  next.total = list.length;
  return next;
}

/** How many one-time proofs to seed: a generous upper bound on the rate times the run's length. */
function seedCount(env, maxRate) {
  return Math.ceil(maxRate * (env.opts.warmup + env.opts.duration) * 1.2) + 200;
}

async function m2mToken(env) {
  const res = await fetch(`${env.issuer}/oauth2/token`, {
    method: "POST",
    headers: { authorization: basic(env.m2m.id, env.m2m.secret), "content-type": FORM },
    body: new URLSearchParams({ grant_type: "client_credentials", resource: env.resource, scope: "read:things" }).toString(),
  });
  const json = await res.json();
  if (res.status !== 200 || !json.access_token) throw new Error(`client_credentials: ${res.status} ${JSON.stringify(json)}`);
  return json.access_token;
}

const bearer = (token) => ({ authorization: `Bearer ${token}` });

/** The permission check for `permission` at workspace level, answered `{"allowed": allowed}`. */
function permissionCheck(name, title, permission, allowed) {
  return {
    name,
    title,
    async prepare(env) {
      const token = await env.human.freshAccessToken();
      return {
        req: {
          method: "POST",
          path: `${env.prefix}/authorization/check`,
          headers: { ...bearer(token), "content-type": JSON_TYPE },
          body: JSON.stringify({ resource: env.resource, permission, organization_id: null }),
        },
        expectStatus: 200,
        check: (body) => body === JSON.stringify({ allowed }),
      };
    },
  };
}

export const SCENARIOS = [
  {
    name: "cc",
    title: "client_credentials issuance (M2M, HTTP Basic)",
    async prepare(env) {
      return {
        req: {
          method: "POST",
          path: `${env.prefix}/oauth2/token`,
          headers: { authorization: basic(env.m2m.id, env.m2m.secret), "content-type": FORM },
          body: new URLSearchParams({ grant_type: "client_credentials", resource: env.resource, scope: "read:things" }).toString(),
        },
        expectStatus: 200,
        check: (body) => body.includes('"access_token"') && body.includes('"scope":"read:things"'),
      };
    },
  },
  {
    name: "introspect",
    title: "introspection of an active M2M token (HTTP Basic)",
    async prepare(env) {
      const token = await m2mToken(env);
      return {
        req: {
          method: "POST",
          path: `${env.prefix}/oauth2/introspect`,
          headers: { authorization: basic(env.m2m.id, env.m2m.secret), "content-type": FORM },
          body: new URLSearchParams({ token }).toString(),
        },
        expectStatus: 200,
        check: (body) => body.includes('"active":true'),
      };
    },
  },
  {
    name: "session",
    title: "session check (GET /oidc/session, human token)",
    async prepare(env) {
      const token = await env.human.freshAccessToken();
      return {
        req: { method: "GET", path: `${env.prefix}/oidc/session`, headers: bearer(token) },
        expectStatus: 200,
        check: (body) => body.includes('"active":true'),
      };
    },
  },
  permissionCheck("check-allowed", "permission check, allowed (POST /authorization/check)", "read:things", true),
  permissionCheck("check-denied", "permission check, denied (a permission the user does not hold)", "write:things", false),
  {
    name: "userinfo",
    title: "UserInfo (GET /oidc/userinfo, human token)",
    async prepare(env) {
      const token = await env.human.freshAccessToken();
      return {
        req: { method: "GET", path: `${env.prefix}/oidc/userinfo`, headers: bearer(token) },
        expectStatus: 200,
        check: (body) => body.includes('"sub"') && body.includes(`"email":"${env.human.env.user.email}"`),
      };
    },
  },
  {
    name: "userinfo-dpop",
    title: "UserInfo with a DPoP-bound token, a fresh proof per request (signed before the run)",
    async prepare(env) {
      const key = new DpopKey();
      const token = await boundAccessToken(env.human, key);
      const path = `${env.prefix}/oidc/userinfo`;
      const htu = `${env.base}${path}`;
      // Each proof is accepted once, within 60 seconds of its iat: signed now, for this run only.
      const n = seedCount(env, 8000);
      const proofs = Array.from({ length: n }, () => key.proof("GET", htu, { accessToken: token }));
      return {
        req: { method: "GET", path, headers: { authorization: `DPoP ${token}` } },
        perRequest: supply(proofs, (proof) => ({ headers: { dpop: proof } })),
        expectStatus: 200,
        check: (body) => body.includes('"sub"') && body.includes(`"email":"${env.human.env.user.email}"`),
        note: `${n} proofs`,
      };
    },
  },
  {
    name: "scim-filter",
    title: "SCIM: a user found by userName in a directory of 10,000 (filter userName eq)",
    async prepare(env) {
      const { organization, token, domain } = await env.scimDirectory();
      const filter = encodeURIComponent(`userName eq "USER-5000@${domain}"`);
      return {
        req: { method: "GET", path: `${env.prefix}/scim/v2/o/${organization}/Users?filter=${filter}`, headers: bearer(token) },
        expectStatus: 200,
        check: (body) => body.includes('"totalResults":1,') && body.includes(`"userName":"user-5000@${domain}"`),
        note: "10,000 provisioned users",
      };
    },
  },
  {
    name: "scim-page",
    title: "SCIM: a page of 100 users from the middle of a directory of 10,000 (startIndex 5001, with the total)",
    async prepare(env) {
      const { organization, token } = await env.scimDirectory();
      return {
        req: { method: "GET", path: `${env.prefix}/scim/v2/o/${organization}/Users?startIndex=5001&count=100`, headers: bearer(token) },
        expectStatus: 200,
        check: (body) => body.includes('"totalResults":10000,') && body.includes('"startIndex":5001,') && body.includes('"itemsPerPage":100,'),
        note: "10,000 provisioned users",
      };
    },
  },
  {
    name: "refresh",
    title: "refresh rotation, a fresh refresh token per request",
    async prepare(env) {
      const n = seedCount(env, 5000);
      const { client } = env.human.env;
      const tokens = await seedRefreshTokens(env.sql, env.template, n, { masterKeyHex: env.masterKeyHex, publicUrl: env.base, clientId: client.id });
      return {
        req: {
          method: "POST",
          path: `${env.prefix}/oauth2/token`,
          headers: { authorization: basic(client.id, client.secret), "content-type": FORM },
        },
        perRequest: supply(tokens, (t) => ({ body: `grant_type=refresh_token&refresh_token=${t}` })),
        expectStatus: 200,
        check: (body) => body.includes('"access_token"') && body.includes('"refresh_token"'),
        note: `${n} seeded families`,
      };
    },
  },
  {
    name: "code",
    title: "code exchange (PKCE, ID token), pre-created codes",
    async prepare(env) {
      const n = seedCount(env, 3000);
      const { client } = env.human.env;
      const { verifier, codes } = await seedCodes(env.sql, env.template, n, client.redirectUri, env.opts.warmup + env.opts.duration + 120);
      const redirect = encodeURIComponent(client.redirectUri);
      return {
        req: {
          method: "POST",
          path: `${env.prefix}/oauth2/token`,
          headers: { authorization: basic(client.id, client.secret), "content-type": FORM },
        },
        perRequest: supply(codes, (c) => ({ body: `grant_type=authorization_code&code=${c}&redirect_uri=${redirect}&code_verifier=${verifier}` })),
        expectStatus: 200,
        check: (body) => body.includes('"id_token"') && body.includes('"refresh_token"'),
        note: `${n} seeded codes`,
      };
    },
  },
  {
    name: "discovery",
    title: "discovery document",
    async prepare(env) {
      return {
        req: { method: "GET", path: `${env.prefix}/.well-known/openid-configuration` },
        expectStatus: 200,
        check: (body) => body.includes(`"issuer":"${env.issuer}"`),
      };
    },
  },
  {
    name: "jwks",
    title: "JWKS",
    async prepare(env) {
      return {
        req: { method: "GET", path: `${env.prefix}/.well-known/jwks.json` },
        expectStatus: 200,
        check: (body) => body.includes('"keys":[{') && body.includes('"kty":"EC"'),
      };
    },
  },
  {
    name: "signin-page",
    title: "hosted sign-in page GET (Next.js page, pending transaction)",
    async prepare(env) {
      const tx = await env.human.pendingTransaction();
      return {
        req: { method: "GET", path: tx.pagePath, headers: { cookie: tx.cookie } },
        expectStatus: 200,
        check: (body) => body.includes('name="csrf"') && body.includes('name="password"'),
      };
    },
  },
  {
    name: "signin",
    title: "password sign-in POST (argon2id), a fresh transaction per request",
    async prepare(env) {
      const n = seedCount(env, env.opts.loginSeedRate);
      const { client } = env.human.env;
      const txs = await seedTransactions(env.sql, env.template, n, {
        redirectUri: client.redirectUri,
        masterKeyHex: env.masterKeyHex,
        ttlSeconds: env.opts.warmup + env.opts.duration + 600,
      });
      const { email, password } = env.human.env.user;
      const callback = `${client.redirectUri}?code=`;
      // Many people signing in, each from an address of their own (X-Forwarded-For; the server runs
      // with TRUST_PROXY=true): one address may have only a few password attempts in progress at once.
      let sent = 0;
      return {
        req: {
          method: "POST",
          path: `${env.prefix}/sign-in/password`,
          headers: { "content-type": FORM, origin: env.base },
        },
        perRequest: supply(txs, (t) => ({
          headers: { cookie: t.cookie, "x-forwarded-for": `10.1.${(sent >> 8) & 255}.${sent++ & 255}` },
          body: new URLSearchParams({ tx: t.txId, csrf: t.csrf, email, password }).toString(),
        })),
        expectStatus: 303,
        check: (_body, headers) => typeof headers.location === "string" && headers.location.startsWith(callback),
        note: `${n} seeded transactions`,
      };
    },
  },
];

/** The calibration target (bench/baseline.mjs): bare node:http + one PostgreSQL select. */
export const BASELINE = {
  name: "baseline-pgselect",
  title: "calibration: bare node:http + one PostgreSQL select 1",
  async prepare() {
    return { req: { method: "GET", path: "/pgselect" }, expectStatus: 200, check: (body) => body.includes('"ok":true') };
  },
};
