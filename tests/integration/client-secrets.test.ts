import { beforeAll, describe, expect, it } from "vitest";
import { and, eq, like } from "drizzle-orm";
import { auditEvents, clients, clientSecrets } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import { isActiveSecret, secretActiveSql } from "../../lib/authority";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { authenticateClient } from "../../lib/oauth/clients";
import { OAuthError } from "../../lib/oauth/errors";
import {
  ClientSecretError,
  createClientSecret,
  listClientSecrets,
  revokeClientSecret,
  rotateClientSecret,
} from "../../lib/clients/secrets";
import { basic, call, createHarness, exchangeCode, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, API, authzWorkspace, M2M, SPA, WEB } from "../helpers/fixtures";

const DAY = 24 * 3600_000;
const HOUR = 3600_000;
let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

/**
 * A fresh workspace per test: secrets are per client and tests change them. Without users unless
 * asked (password hashing is what makes seeding slow).
 */
async function workspace(extra: (doc: ReturnType<typeof authzWorkspace>) => void = () => {}, withUsers = false): Promise<string> {
  const id = uniqueWorkspaceId("secrets");
  const doc = authzWorkspace(id);
  if (!withUsers) {
    doc.users = [];
    doc.organizations = [];
  }
  extra(doc);
  await seed(h, doc);
  return id;
}

const ref = (workspaceId: string, clientId = M2M.client_id) => ({ workspaceId, clientId, clock: h.clock });

function m2mToken(ws: string, secret: string): Promise<Response> {
  return call(h, `/t/${ws}/oauth2/token`, {
    form: { grant_type: "client_credentials", resource: API, scope: "read:things" },
    headers: { authorization: basic(M2M.client_id, secret) },
  });
}

async function checkStatus(ws: string, token: string): Promise<number> {
  const res = await call(h, `/t/${ws}/authorization/check`, {
    method: "POST",
    body: JSON.stringify({ resource: API, permission: "read:things", organization_id: null }),
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
  });
  return res.status;
}

async function expectSecretError(promise: Promise<unknown>, code: string) {
  await expect(promise).rejects.toBeInstanceOf(ClientSecretError);
  await expect(promise).rejects.toMatchObject({ code });
}

describe("a new client secret", () => {
  it("has 256 bits of randomness, is stored only as its SHA-256, and is never listed", async () => {
    const ws = await workspace();
    const a = await createClientSecret(h.service.db, ref(ws));
    expect(a.secret).toMatch(/^lks_[A-Za-z0-9_-]{43}$/); // 32 random bytes
    const [row] = await h.service.db.select().from(clientSecrets).where(eq(clientSecrets.id, a.id));
    expect(row.secretHash).toBe(sha256Hex(a.secret));
    expect(JSON.stringify(row)).not.toContain(a.secret.slice(4));
    const listed = await listClientSecrets(h.service.db, ref(ws));
    expect(JSON.stringify(listed)).not.toContain(a.secret.slice(4));
    expect(JSON.stringify(listed)).not.toContain(row.secretHash);
    for (const info of listed) expect(Object.keys(info).sort()).toEqual(["createdAt", "expiresAt", "id", "lastUsedAt", "revokedAt", "status"]);
    const audit = await h.service.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, ws));
    expect(JSON.stringify(audit)).not.toContain(a.secret.slice(4));
  });

  it("is valid for 90 days by default, or the client's configured lifetime", async () => {
    const ws = await workspace((doc) => {
      doc.applications = doc.applications.map((a) => (a.client_id === WEB.client_id ? { ...a, secret_lifetime_days: 30 } : a));
    });
    const now = h.clock.now().getTime();
    const m2m = await createClientSecret(h.service.db, ref(ws));
    expect(m2m.expiresAt.getTime() - now).toBe(90 * DAY);
    const web = await createClientSecret(h.service.db, ref(ws, WEB.client_id));
    expect(web.expiresAt.getTime() - now).toBe(30 * DAY);
  });

  it("takes a lifetime of 1 to 365 whole days, nothing else", async () => {
    const ws = await workspace();
    const now = h.clock.now().getTime();
    const one = await createClientSecret(h.service.db, { ...ref(ws), lifetimeDays: 1 });
    expect(one.expiresAt.getTime() - now).toBe(DAY);
    await revokeClientSecret(h.service.db, { ...ref(ws), secretId: one.id });
    const year = await createClientSecret(h.service.db, { ...ref(ws), lifetimeDays: 365 });
    expect(year.expiresAt.getTime() - now).toBe(365 * DAY);
    for (const lifetimeDays of [0, 366, 1.5, -1, Number.NaN]) {
      await expectSecretError(createClientSecret(h.service.db, { ...ref(ws), lifetimeDays }), "invalid_argument");
      await expectSecretError(rotateClientSecret(h.service.db, { ...ref(ws), overlapHours: 0, lifetimeDays }), "invalid_argument");
    }
  });

  it("is refused when two are already active", async () => {
    const ws = await workspace();
    // The workspace file's preset secret is the first active one.
    const second = await createClientSecret(h.service.db, { ...ref(ws), lifetimeDays: 1 });
    await expectSecretError(createClientSecret(h.service.db, ref(ws)), "too_many_active_secrets");
    h.clock.advance(DAY);
    // The second one expired: room for another.
    const third = await createClientSecret(h.service.db, ref(ws));
    expect(third.id).not.toBe(second.id);
    expect((await listClientSecrets(h.service.db, ref(ws))).filter((s) => s.status === "active")).toHaveLength(2);
  });

  it("does not exist for public clients", async () => {
    const ws = await workspace();
    await expectSecretError(createClientSecret(h.service.db, ref(ws, SPA.client_id)), "client_has_no_secrets");
    await expectSecretError(rotateClientSecret(h.service.db, { ...ref(ws, SPA.client_id), overlapHours: 0 }), "client_has_no_secrets");
    await expectSecretError(createClientSecret(h.service.db, ref(ws, "nobody")), "client_not_found");
  });
});

describe("client authentication by secret", () => {
  it("finds the matching active secret among several, and nothing for a wrong, revoked or expired one", async () => {
    const ws = await workspace();
    const ctx = contextFor(h.service, (await resolveWorkspace(h.service, ws))!);
    /** The secret that HTTP Basic authentication matched, or null when it refused the client. */
    const matched = async (secret: string): Promise<string | null> => {
      const request = new Request("https://h/", { method: "POST", headers: { authorization: basic(M2M.client_id, secret) } });
      try {
        return (await authenticateClient(request, new Map(), ctx)).credentialId;
      } catch (error) {
        if (error instanceof OAuthError && error.error === "invalid_client") return null;
        throw error;
      }
    };
    const added = await createClientSecret(h.service.db, { ...ref(ws), lifetimeDays: 1 });
    const [preset] = (await listClientSecrets(h.service.db, ref(ws))).filter((s) => s.id !== added.id);
    expect(await matched(added.secret)).toBe(added.id);
    expect(await matched(M2M.secret)).toBe(preset.id);
    expect(await matched(M2M.secret + "x")).toBeNull();
    expect(await matched("")).toBeNull();
    expect(await matched(sha256Hex(M2M.secret))).toBeNull();
    await revokeClientSecret(h.service.db, { ...ref(ws), secretId: preset.id });
    expect(await matched(M2M.secret)).toBeNull();
    h.clock.advance(DAY);
    expect(await matched(added.secret)).toBeNull();
  });
});

describe("rotation", () => {
  it("replaces immediately: the old secret and its M2M tokens end now", async () => {
    const ws = await workspace();
    const oldToken = (await (await m2mToken(ws, M2M.secret)).json()).access_token;
    expect(await checkStatus(ws, oldToken)).toBe(200);
    const rotated = await rotateClientSecret(h.service.db, { ...ref(ws), overlapHours: 0 });
    expect(rotated.previous).toEqual([expect.objectContaining({ status: "revoked" })]);
    expect((await m2mToken(ws, M2M.secret)).status).toBe(401);
    expect(await checkStatus(ws, oldToken)).toBe(401);
    const fresh = await m2mToken(ws, rotated.secret);
    expect(fresh.status).toBe(200);
    expect(await checkStatus(ws, (await fresh.json()).access_token)).toBe(200);
  });

  it("overlaps for up to 24 hours with exactly two active secrets, then the old one expires", async () => {
    const ws = await workspace();
    const rotated = await rotateClientSecret(h.service.db, { ...ref(ws), overlapHours: 24 });
    expect(rotated.previous).toEqual([expect.objectContaining({ status: "active", expiresAt: new Date(h.clock.now().getTime() + 24 * HOUR) })]);
    expect((await listClientSecrets(h.service.db, ref(ws))).filter((s) => s.status === "active")).toHaveLength(2);
    h.clock.advance(24 * HOUR - 1000);
    expect((await m2mToken(ws, M2M.secret)).status).toBe(200);
    expect((await m2mToken(ws, rotated.secret)).status).toBe(200);
    h.clock.advance(1000);
    expect((await m2mToken(ws, M2M.secret)).status).toBe(401);
    expect((await m2mToken(ws, rotated.secret)).status).toBe(200);
    const statuses = (await listClientSecrets(h.service.db, ref(ws))).map((s) => s.status);
    expect(statuses).toEqual(["active", "expired"]);
  });

  it("refuses an overlap beyond 24 hours or below 0", async () => {
    const ws = await workspace();
    for (const overlapHours of [25, 24.5, -1, Number.POSITIVE_INFINITY]) {
      await expectSecretError(rotateClientSecret(h.service.db, { ...ref(ws), overlapHours }), "invalid_argument");
    }
    expect((await listClientSecrets(h.service.db, ref(ws))).filter((s) => s.status === "active")).toHaveLength(1);
  });

  it("never leaves more than two active: rotating with two active revokes the older now", async () => {
    const ws = await workspace();
    h.clock.advance(1000);
    const second = await createClientSecret(h.service.db, ref(ws));
    const presetToken = (await (await m2mToken(ws, M2M.secret)).json()).access_token;
    h.clock.advance(1000);
    const third = await rotateClientSecret(h.service.db, { ...ref(ws), overlapHours: 12 });
    const byId = new Map((await listClientSecrets(h.service.db, ref(ws))).map((s) => [s.id, s]));
    expect([...byId.values()].filter((s) => s.status === "active").map((s) => s.id).sort()).toEqual([second.id, third.id].sort());
    expect((await m2mToken(ws, M2M.secret)).status).toBe(401);
    expect(await checkStatus(ws, presetToken)).toBe(401);
    // Rotating again during the overlap still leaves two: the overlapping one is revoked.
    const fourth = await rotateClientSecret(h.service.db, { ...ref(ws), overlapHours: 12 });
    const active = (await listClientSecrets(h.service.db, ref(ws))).filter((s) => s.status === "active").map((s) => s.id);
    expect(active.sort()).toEqual([third.id, fourth.id].sort());
    expect((await m2mToken(ws, second.secret)).status).toBe(401);
  });

  it("never extends the old secret beyond its own expiry", async () => {
    const ws = await workspace();
    const short = await rotateClientSecret(h.service.db, { ...ref(ws), overlapHours: 0, lifetimeDays: 1 });
    h.clock.advance(DAY - 2 * HOUR);
    const next = await rotateClientSecret(h.service.db, { ...ref(ws), overlapHours: 24 });
    expect(next.previous[0]).toMatchObject({ id: short.id, expiresAt: short.expiresAt });
  });
});

describe("revocation", () => {
  it("ends the secret and the M2M tokens issued through it, and nothing else", async () => {
    const ws = await workspace();
    const other = await createClientSecret(h.service.db, ref(ws));
    const viaPreset = (await (await m2mToken(ws, M2M.secret)).json()).access_token;
    const viaOther = (await (await m2mToken(ws, other.secret)).json()).access_token;
    const preset = (await listClientSecrets(h.service.db, ref(ws))).find((s) => s.id !== other.id)!;
    const revoked = await revokeClientSecret(h.service.db, { ...ref(ws), secretId: preset.id });
    expect(revoked).toMatchObject({ id: preset.id, status: "revoked", revokedAt: h.clock.now() });
    expect(await checkStatus(ws, viaPreset)).toBe(401);
    expect(await checkStatus(ws, viaOther)).toBe(200);
    expect((await m2mToken(ws, M2M.secret)).status).toBe(401);
    // Revoking again changes nothing; an unknown id is an error.
    h.clock.advance(1000);
    expect((await revokeClientSecret(h.service.db, { ...ref(ws), secretId: preset.id })).revokedAt).toEqual(revoked.revokedAt);
    await expectSecretError(revokeClientSecret(h.service.db, { ...ref(ws), secretId: "nope" }), "secret_not_found");
  });

  it("cannot reach another workspace's secret", async () => {
    const a = await workspace();
    const b = await workspace();
    const [secretOfB] = await listClientSecrets(h.service.db, ref(b));
    await expectSecretError(revokeClientSecret(h.service.db, { ...ref(a), secretId: secretOfB.id }), "secret_not_found");
    expect((await m2mToken(b, M2M.secret)).status).toBe(200);
  });
});

describe("human authorizations of a confidential client", () => {
  it("continue when the old secret merely expires and the new one is in use", async () => {
    const ws = await workspace(undefined, true);
    const r = await signIn(h, ws, { ...WEB, ...ADA, scope: "openid read:things", resource: API });
    const first = await exchangeCode(h, ws, {
      code: r.callback.searchParams.get("code")!,
      redirect_uri: WEB.redirect_uri,
      verifier: r.verifier,
      authorization: basic(WEB.client_id, WEB.secret),
    });
    expect(first.status).toBe(200);
    const { refresh_token } = await first.json();
    const rotated = await rotateClientSecret(h.service.db, { ...ref(ws, WEB.client_id), overlapHours: 1 });
    h.clock.advance(HOUR);
    const refresh = (secret: string, token: string) =>
      call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: token }, headers: { authorization: basic(WEB.client_id, secret) } });
    // The old secret has expired: it no longer authenticates...
    expect((await refresh(WEB.secret, refresh_token)).status).toBe(401);
    // ...but the authorization made with it goes on with the new secret.
    const renewed = await refresh(rotated.secret, refresh_token);
    expect(renewed.status).toBe(200);
    const body = await renewed.json();
    expect(body.scope).toBe("openid read:things");
    const session = await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(session.status).toBe(200);
    expect(await checkStatus(ws, body.access_token)).toBe(200);
  });
});

describe("whether a secret is active: one rule, in SQL and in JS", () => {
  it("the SQL form and isActiveSecret agree on every secret: revoked or not, expired, expiring now, in a moment, or later", async () => {
    const ws = await workspace();
    const [client] = await h.service.db
      .select({ pk: clients.id })
      .from(clients)
      .where(and(eq(clients.workspaceId, ws), eq(clients.clientId, M2M.client_id)));
    const now = h.clock.now();
    const expiries = [-DAY, -1, 0, 1, HOUR];
    const rows = expiries.flatMap((offset) =>
      [null, new Date(now.getTime() - HOUR)].map((revokedAt, i) => ({
        id: `secret-twin-${offset}-${i}`,
        workspaceId: ws,
        clientPk: client!.pk,
        secretHash: sha256Hex(`twin-${offset}-${i}`),
        createdAt: new Date(now.getTime() - DAY),
        expiresAt: new Date(now.getTime() + offset),
        revokedAt,
      })),
    );
    await h.service.db.insert(clientSecrets).values(rows);
    const judged = await h.service.db
      .select({ id: clientSecrets.id, revokedAt: clientSecrets.revokedAt, expiresAt: clientSecrets.expiresAt, active: secretActiveSql(clientSecrets, now) })
      .from(clientSecrets)
      .where(and(eq(clientSecrets.workspaceId, ws), like(clientSecrets.id, "secret-twin-%")));
    expect(judged).toHaveLength(rows.length);
    for (const row of judged) expect([row.id, row.active]).toEqual([row.id, isActiveSecret(row, now)]);
    // Both kinds of answer occur: only the unrevoked secrets expiring after now are active.
    expect(judged.filter((r) => r.active).map((r) => r.id).sort()).toEqual(["secret-twin-1-0", "secret-twin-3600000-0"]);
  });
});
