// Setting up what the scenarios present: human tokens through the real flow (authorize → hosted
// sign-in → code exchange), then one-time proofs (refresh tokens, codes, sign-in transactions)
// seeded straight into the database with known plaintexts, so every request succeeds once.
import { createHash, createHmac, hkdfSync, randomBytes } from "node:crypto";

const b64url = (bytes = 32) => randomBytes(bytes).toString("base64url");
const sha256Hex = (v) => createHash("sha256").update(v).digest("hex");
const sha256B64 = (v) => createHash("sha256").update(v).digest("base64url");
export const basic = (id, secret) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
export const FORM = "application/x-www-form-urlencoded";

/**
 * lib/http/csrf.ts csrfToken(masterKey, "hosted-sign-in", [workspace, transaction, binding]): HMAC under
 * the master key's "csrf:hosted-sign-in" subkey (lib/crypto.ts deriveKey) of the length-prefixed values.
 */
export function csrfFor(masterKeyHex, workspaceId, txId, binding) {
  const key = Buffer.from(hkdfSync("sha256", Buffer.from(masterKeyHex, "hex"), Buffer.alloc(0), "latchkey:csrf:hosted-sign-in", 32));
  const encoded = [workspaceId, txId, binding].map((value) => `${value.length}:${value}`).join("");
  return createHmac("sha256", key).update(encoded).digest("base64url");
}

async function request(url, init = {}) {
  const res = await fetch(url, { redirect: "manual", ...init });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

function expect(cond, what, res) {
  if (!cond) throw new Error(`${what}: ${res.status} ${res.headers.get("location") ?? ""} ${res.text.slice(0, 300)}`);
}

/**
 * The human side of the benchmark workspace: one user signed in through the real flow, a
 * confidential web client holding its refresh token, and helpers that mint fresh access tokens.
 */
export class Human {
  constructor(env) {
    this.env = env; // { base, workspace, client: {id, secret, redirectUri}, user: {email, password}, scope, resource }
  }

  issuer() {
    return `${this.env.base}/t/${this.env.workspace}`;
  }

  /** GET /oauth2/authorize without a session: a pending transaction and its binding cookie. */
  async pendingTransaction() {
    const { client, scope, resource } = this.env;
    const verifier = b64url(32);
    const query = new URLSearchParams({
      client_id: client.id,
      redirect_uri: client.redirectUri,
      response_type: "code",
      scope,
      state: b64url(24),
      nonce: b64url(24),
      code_challenge: sha256B64(verifier),
      code_challenge_method: "S256",
      resource,
    });
    const res = await request(`${this.issuer()}/oauth2/authorize?${query}`);
    expect(res.status === 303, "authorize", res);
    const location = new URL(res.headers.get("location"), this.env.base);
    const txId = location.searchParams.get("tx");
    const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).find((c) => c.startsWith(`lk_tx_${txId}=`));
    expect(txId && cookie, "authorize: no transaction cookie", res);
    return { txId, cookie, verifier, pagePath: `${location.pathname}${location.search}` };
  }

  /** authorize → hosted sign-in page (CSRF read from the form) → password POST → code → tokens. */
  async signIn() {
    const { client, user } = this.env;
    const tx = await this.pendingTransaction();
    const page = await request(`${this.env.base}${tx.pagePath}`, { headers: { cookie: tx.cookie } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
    expect(page.status === 200 && csrf, "hosted sign-in page: no form", page);
    const post = await request(`${this.issuer()}/sign-in/password`, {
      method: "POST",
      headers: { "content-type": FORM, cookie: tx.cookie, origin: this.env.base },
      body: new URLSearchParams({ tx: tx.txId, csrf, email: user.email, password: user.password }).toString(),
    });
    const callback = new URL(post.headers.get("location") ?? "/", this.env.base);
    const code = callback.searchParams.get("code");
    expect(post.status === 303 && code, "password sign-in", post);
    const tokens = await this.token({ grant_type: "authorization_code", code, redirect_uri: client.redirectUri, code_verifier: tx.verifier });
    expect(tokens.json?.id_token, "code exchange", tokens);
    this.refreshToken = tokens.json.refresh_token;
    this.accessToken = tokens.json.access_token;
    this.issuedAt = Date.now();
    return tokens.json;
  }

  async token(form) {
    const res = await request(`${this.issuer()}/oauth2/token`, {
      method: "POST",
      headers: { "content-type": FORM, authorization: basic(this.env.client.id, this.env.client.secret) },
      body: new URLSearchParams(form).toString(),
    });
    try {
      res.json = JSON.parse(res.text);
    } catch {
      res.json = undefined;
    }
    return res;
  }

  /** A fresh access token (they live 5 minutes) by rotating the refresh token, as a client would. */
  async freshAccessToken() {
    const res = await this.token({ grant_type: "refresh_token", refresh_token: this.refreshToken });
    expect(res.status === 200 && res.json?.access_token, "refresh", res);
    this.refreshToken = res.json.refresh_token;
    this.accessToken = res.json.access_token;
    this.issuedAt = Date.now();
    return this.accessToken;
  }
}

/** lib/oauth/subject.ts pairwiseSubject, from the master key the bench gave the server. */
function pairwiseSubject(masterKeyHex, publicUrl, workspaceId, clientId, userId) {
  const key = Buffer.from(hkdfSync("sha256", Buffer.from(masterKeyHex, "hex"), Buffer.alloc(0), "latchkey:pairwise-subject", 32));
  return createHmac("sha256", key).update(`${new URL(publicUrl).host}\n${workspaceId}\n${clientId}\n${userId}`).digest("base64url");
}

/** The grant (refresh family) of a refresh token: the template for seeded families and codes. */
export async function grantOf(sql, refreshToken) {
  const [row] = await sql`
    select g.* from refresh_tokens r join grants g on g.id = r.grant_id where r.token_hash = ${sha256Hex(refreshToken)}`;
  if (!row) throw new Error("seed: the signed-in grant was not found");
  return row;
}

/**
 * `n` users cloned from the template's user (same roles, same password hash), each with one live
 * hosted session cloned from the template's: one-time proofs then belong to different users, as
 * in production, instead of all to one user and one session row.
 */
async function seedUsersWithSessions(sql, template, n, salt) {
  await sql`
    insert into users (id, workspace_id, email, email_normalized, email_verified, name, password_hash, status, created_at, updated_at)
    select 'bench-u-' || ${salt} || '-' || i, workspace_id, 'u' || ${salt} || i || '@bench.example', 'u' || lower(${salt}) || i || '@bench.example',
           email_verified, name, password_hash, status, now(), now()
    from users, generate_series(1, ${n}::int) i where id = ${template.user_id}`;
  await sql`
    insert into user_roles (id, workspace_id, user_id, role_id, organization_id, created_at)
    select 'bench-ur-' || ${salt} || '-' || i || '-' || r.id, r.workspace_id, 'bench-u-' || ${salt} || '-' || i, r.role_id, r.organization_id, now()
    from user_roles r, generate_series(1, ${n}::int) i where r.user_id = ${template.user_id}`;
  await sql`
    insert into hosted_sessions (id, workspace_id, user_id, secret_hash, evidence, auth_time, amr, acr, organization_id, connection_id, created_at, last_seen_at, idle_expires_at, absolute_expires_at)
    select 'bench-s-' || ${salt} || '-' || i, workspace_id, 'bench-u-' || ${salt} || '-' || i, secret_hash, evidence, auth_time, amr, acr, organization_id, connection_id,
           now(), now(), idle_expires_at, absolute_expires_at
    from hosted_sessions, generate_series(1, ${n}::int) i where id = ${template.session_id}`;
}

/**
 * `n` refresh families cloned from `template` (same client, scope and API), each of its own user
 * and session, with one current refresh token: rotations never contend on shared rows beyond the
 * client's and the API's, as with real users.
 */
export async function seedRefreshTokens(sql, template, n, { masterKeyHex, publicUrl, clientId }) {
  const salt = b64url(6).replace(/[-_]/g, "x");
  await seedUsersWithSessions(sql, template, n, salt);
  // Each family records its user's pairwise subject, as the code exchange does (lib/oauth/subject.ts).
  const subjects = Array.from({ length: n }, (_, i) =>
    pairwiseSubject(masterKeyHex, publicUrl, template.workspace_id, clientId, `bench-u-${salt}-${i + 1}`),
  );
  await sql`
    insert into grants (id, workspace_id, client_pk, user_id, session_id, scope, api_id, subject, created_at, last_used_at, idle_expires_at, absolute_expires_at)
    select 'bench-' || ${salt} || '-' || s.i, workspace_id, client_pk, 'bench-u-' || ${salt} || '-' || s.i, 'bench-s-' || ${salt} || '-' || s.i, scope, api_id,
           s.subject, now(), now(), now() + interval '7 days', now() + interval '30 days'
    from grants, unnest(${subjects}::text[]) with ordinality as s(subject, i) where id = ${template.id}`;
  await sql`
    insert into refresh_tokens (token_hash, workspace_id, grant_id, state, created_at)
    select encode(sha256(convert_to('lkr_bench_' || ${salt} || '_' || i, 'UTF8')), 'hex'), ${template.workspace_id}, 'bench-' || ${salt} || '-' || i, 'current', now()
    from generate_series(1, ${n}::int) i`;
  await sql`analyze users, user_roles, hosted_sessions, grants, refresh_tokens`;
  return Array.from({ length: n }, (_, i) => `lkr_bench_${salt}_${i + 1}`);
}

/**
 * `n` authorization codes, each of its own user and session, all with one PKCE verifier. Codes live 60 s
 * when issued; seeded ones expire `ttlSeconds` after seeding so a long run can still redeem them.
 */
export async function seedCodes(sql, template, n, redirectUri, ttlSeconds) {
  const salt = b64url(6).replace(/[-_]/g, "x");
  const verifier = b64url(32);
  await seedUsersWithSessions(sql, template, n, salt);
  await sql`
    insert into authorization_codes (code_hash, workspace_id, client_pk, user_id, session_id, redirect_uri, scope, nonce, code_challenge, api_id, created_at, expires_at)
    select encode(sha256(convert_to('bench_code_' || ${salt} || '_' || i, 'UTF8')), 'hex'), ${template.workspace_id}, ${template.client_pk},
           'bench-u-' || ${salt} || '-' || i, 'bench-s-' || ${salt} || '-' || i, ${redirectUri}, ${sql.json(template.scope)}, ${b64url(24)},
           ${sha256B64(verifier)}, ${template.api_id}, now(), now() + make_interval(secs => ${ttlSeconds}::int)
    from generate_series(1, ${n}::int) i`;
  await sql`analyze users, user_roles, hosted_sessions, authorization_codes`;
  return { verifier, codes: Array.from({ length: n }, (_, i) => `bench_code_${salt}_${i + 1}`) };
}

/**
 * `n` pending authorization transactions as GET /oauth2/authorize stores them, each with its
 * browser binding (the cookie) and the CSRF token the hosted page would render for it.
 */
export async function seedTransactions(sql, template, n, { redirectUri, masterKeyHex, ttlSeconds }) {
  const salt = b64url(6).replace(/[-_]/g, "x");
  await sql`
    insert into authorization_transactions (id, workspace_id, client_pk, redirect_uri, scope, state, nonce, code_challenge, api_id, browser_binding_hash, created_at, expires_at)
    select 'btx' || ${salt} || i, ${template.workspace_id}, ${template.client_pk}, ${redirectUri}, ${sql.json(template.scope)}, ${b64url(24)}, ${b64url(24)},
           ${sha256B64(b64url(32))}, ${template.api_id}, encode(sha256(convert_to('bnd' || ${salt} || i, 'UTF8')), 'hex'), now(),
           now() + make_interval(secs => ${ttlSeconds}::int)
    from generate_series(1, ${n}::int) i`;
  await sql`analyze authorization_transactions`;
  return Array.from({ length: n }, (_, i) => {
    const txId = `btx${salt}${i + 1}`;
    const binding = `bnd${salt}${i + 1}`;
    return { txId, cookie: `lk_tx_${txId}=${binding}`, csrf: csrfFor(masterKeyHex, template.workspace_id, txId, binding) };
  });
}

/**
 * An organization with a SCIM directory of `n` provisioned users (lib/organizations/scim), as its
 * identity provider would have created them, and a token for it: the SCIM scenarios' base URL path
 * and bearer token.
 */
export async function seedScimDirectory(sql, template, n) {
  const salt = b64url(6).replace(/[-_]/g, "x").toLowerCase();
  const ws = template.workspace_id;
  const org = `bench-org-${salt}`;
  const directory = `bench-dir-${salt}`;
  const token = `lks_scim_${b64url(32)}`;
  await sql`insert into organizations (id, workspace_id, slug, name, active, created_at, updated_at) values (${org}, ${ws}, ${org}, 'Bench organization', true, now(), now())`;
  await sql`insert into scim_directories (id, workspace_id, organization_id, enabled, any_domain, created_at, updated_at) values (${directory}, ${ws}, ${org}, true, true, now(), now())`;
  await sql`insert into scim_tokens (id, workspace_id, directory_id, token_hash, created_at) values (${`bench-tok-${salt}`}, ${ws}, ${directory}, ${sha256Hex(token)}, now())`;
  await sql`
    insert into users (id, workspace_id, email, email_normalized, email_verified, status, created_at, updated_at)
    select 'bench-scim-u-' || ${salt} || '-' || i, ${ws}, 'user-' || i || '@' || ${org} || '.test', 'user-' || i || '@' || ${org} || '.test', true, 'active', now(), now()
    from generate_series(1, ${n}::int) i`;
  await sql`
    insert into organization_members (id, workspace_id, organization_id, user_id, origin, created_at)
    select 'bench-scim-m-' || ${salt} || '-' || i, ${ws}, ${org}, 'bench-scim-u-' || ${salt} || '-' || i, 'directory', now()
    from generate_series(1, ${n}::int) i`;
  await sql`
    insert into scim_users (id, workspace_id, directory_id, user_id, user_name, user_name_key, external_id, display_name, email_key, active, managed, attributes, version, created_at, updated_at)
    select 'bench-scim-' || ${salt} || '-' || i, ${ws}, ${directory}, 'bench-scim-u-' || ${salt} || '-' || i,
           'user-' || i || '@' || ${org} || '.test', 'user-' || i || '@' || ${org} || '.test', 'object-' || i, 'User ' || i, 'user-' || i || '@' || ${org} || '.test', true, true,
           jsonb_build_object('externalId', 'object-' || i, 'displayName', 'User ' || i, 'name', jsonb_build_object('givenName', 'User', 'familyName', i::text),
             'emails', jsonb_build_array(jsonb_build_object('value', 'user-' || i || '@' || ${org} || '.test', 'type', 'work', 'primary', true))),
           1, now() + make_interval(secs => i), now()
    from generate_series(1, ${n}::int) i`;
  await sql`analyze users, organization_members, scim_users`;
  return { organization: org, token, domain: `${org}.test` };
}
