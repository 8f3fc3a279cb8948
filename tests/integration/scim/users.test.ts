/**
 * SCIM `/Users` (lib/organizations/scim): the directory's token reaches only its organization,
 * users are created, read, filtered, paged, replaced, patched in the shapes Microsoft Entra and
 * Okta send, and deleted; accounts are matched by the connection's subject, never by email alone;
 * only the organization's verified domains are provisioned; deactivation ends access at once.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { federatedIdentities, hostedSessions, scimUsers, users } from "../../../db/schema";
import { newId } from "../../../lib/crypto";
import { ACME, GLOBEX } from "../../helpers/fixtures";
import { createHarness, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { auditRows } from "../../helpers/lifecycle";
import { accountOf, ACME_ISSUER, directoryWithToken, entraUser, isMember, json, oktaUser, scimClient, seedScimWorkspace, type ScimClient } from "./helpers";

let h: Harness;
const ws = uniqueWorkspaceId("scimu");
let ids: Awaited<ReturnType<typeof seedScimWorkspace>>;
let acme: ScimClient;
let globex: ScimClient;
let acmeToken: string;
let globexToken: string;

beforeAll(async () => {
  h = await createHarness();
  ids = await seedScimWorkspace(h, ws, { users: [{ email: "existing@acme.test", password: "an existing local password", email_verified: true }] });
  acmeToken = (await directoryWithToken(h, ws, ids.acme, { connectionId: ids.connection, subjectAttribute: "externalId" })).token;
  globexToken = (await directoryWithToken(h, ws, ids.globex, { anyDomain: true })).token;
  acme = scimClient(h, ws, ACME, acmeToken);
  globex = scimClient(h, ws, GLOBEX, globexToken);
});

async function create(client: ScimClient, body: object): Promise<Record<string, any>> {
  const res = await client("POST", "/Users", body);
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
  return json(res);
}

describe("authentication", () => {
  it("answers without a token, with a wrong one, and with another organization's token in SCIM's error shape (401)", async () => {
    for (const res of [
      await scimClient(h, ws, ACME, "")("GET", "/Users"),
      await scimClient(h, ws, ACME, "lks_scim_wrong")("GET", "/Users"),
      await scimClient(h, ws, ACME, globexToken)("GET", "/Users"),
      await scimClient(h, ws, GLOBEX, acmeToken)("GET", "/ServiceProviderConfig"),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/scim+json");
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      expect(await json(res)).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "401" });
    }
  });

  it("a token of another workspace's directory opens nothing here", async () => {
    const other = uniqueWorkspaceId("scimo");
    const otherIds = await seedScimWorkspace(h, other);
    const { token } = await directoryWithToken(h, other, otherIds.acme);
    expect((await scimClient(h, ws, ACME, token)("GET", "/Users")).status).toBe(401);
    expect((await scimClient(h, other, ACME, token)("GET", "/Users")).status).toBe(200);
  });

  it("one organization's token never reads or changes another's users", async () => {
    const user = await create(globex, oktaUser("iso@globex.test", "iso-1"));
    expect((await acme("GET", `/Users/${user.id}`)).status).toBe(404);
    expect((await acme("PATCH", `/Users/${user.id}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", value: { active: false } }] })).status).toBe(404);
    expect((await acme("DELETE", `/Users/${user.id}`)).status).toBe(404);
    const list = await json(await acme("GET", `/Users?filter=${encodeURIComponent('userName eq "iso@globex.test"')}`));
    expect(list.totalResults).toBe(0);
    expect((await globex("GET", `/Users/${user.id}`)).status).toBe(200);
  });
});

describe("discovery", () => {
  it("ServiceProviderConfig, ResourceTypes and Schemas say what is supported", async () => {
    const spc = await json(await acme("GET", "/ServiceProviderConfig"));
    expect(spc).toMatchObject({ patch: { supported: true }, bulk: { supported: false }, filter: { supported: true, maxResults: 200 }, etag: { supported: true }, sort: { supported: false } });
    const types = await json(await acme("GET", "/ResourceTypes"));
    expect(types.Resources.map((t: { id: string }) => t.id)).toEqual(["User", "Group"]);
    expect((await json(await acme("GET", "/ResourceTypes/Group"))).endpoint).toBe("/Groups");
    const schemas = await json(await acme("GET", "/Schemas"));
    expect(schemas.totalResults).toBe(3);
    const user = await json(await acme("GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User"));
    expect(user.attributes.find((a: { name: string }) => a.name === "userName")).toMatchObject({ required: true, uniqueness: "server" });
    expect((await acme("GET", "/Schemas/urn:nothing")).status).toBe(404);
    expect((await acme("GET", "/Nothing")).status).toBe(404);
  });

  it("a method a resource path does not take is 405 with Allow", async () => {
    const res = await acme("DELETE", "/Users");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST");
    expect((await json(res)).status).toBe("405");
  });
});

describe("creating users", () => {
  it("creates an account the directory manages: verified address in the organization's domain, member, identity keyed by the connection's subject", async () => {
    const user = await create(acme, entraUser("Alice@Acme.test", "alice-object-id"));
    expect(user).toMatchObject({ userName: "Alice@Acme.test", externalId: "alice-object-id", active: true, meta: { resourceType: "User", version: 'W/"1"' } });
    // The enterprise extension is listed once the user has one of its attributes.
    expect(user.schemas).toEqual(["urn:ietf:params:scim:schemas:core:2.0:User"]);
    expect(user.meta.location).toBe(`https://auth.example.test/t/${ws}/scim/v2/o/acme/Users/${user.id}`);
    const account = await accountOf(h, ws, user.id);
    expect(account).toMatchObject({ managed: true, user: { emailNormalized: "alice@acme.test", emailVerified: true, passwordHash: null, status: "active" } });
    expect(await isMember(h, ws, ids.acme, account!.user.id)).toBe(true);
    const identities = await h.service.db.select().from(federatedIdentities).where(and(eq(federatedIdentities.workspaceId, ws), eq(federatedIdentities.userId, account!.user.id)));
    expect(identities).toEqual([expect.objectContaining({ source: `connection:${ids.connection}`, issuer: ACME_ISSUER, subject: "alice-object-id" })]);
    expect((await auditRows(h, ws, "scim.user.provisioned")).some((r) => r.subject === account!.user.id)).toBe(true);
  });

  it("never takes a password from the directory", async () => {
    const user = await create(globex, oktaUser("pw@globex.test", "pw-1"));
    expect(user.password).toBeUndefined();
    expect((await accountOf(h, ws, user.id))!.user.passwordHash).toBeNull();
  });

  it("refuses a second user with the same userName (any case) or externalId: 409 uniqueness", async () => {
    await create(acme, entraUser("dup@acme.test", "dup-1"));
    for (const body of [entraUser("DUP@acme.test", "dup-2"), entraUser("other@acme.test", "dup-1")]) {
      const res = await acme("POST", "/Users", body);
      expect(res.status).toBe(409);
      expect(await json(res)).toMatchObject({ status: "409", scimType: "uniqueness" });
    }
  });

  it("refuses an address outside the organization's verified domains, and one in another organization's", async () => {
    const outside = await acme("POST", "/Users", entraUser("someone@elsewhere.test", "out-1"));
    expect(outside.status).toBe(400);
    expect(await json(outside)).toMatchObject({ scimType: "invalidValue" });
    // globex allows any address, but never one in acme's verified domain.
    const squat = await globex("POST", "/Users", oktaUser("ceo@acme.test", "squat-1"));
    expect(squat.status).toBe(400);
    expect((await json(squat)).detail).toContain("another organization");
    const anywhere = await create(globex, oktaUser("contractor@elsewhere.test", "anywhere-1"));
    // Outside its own domains the address is not taken as verified.
    expect((await accountOf(h, ws, anywhere.id))!.user.emailVerified).toBe(false);
  });

  it("never matches an existing account by email alone (409); once the connection knows it by the subject, it is that account", async () => {
    const res = await acme("POST", "/Users", entraUser("existing@acme.test", "existing-subject"));
    expect(res.status).toBe(409);
    expect((await json(res)).detail).toContain("signing in through the connection");
    const [existing] = await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, "existing@acme.test")));
    await h.service.db.insert(federatedIdentities).values({
      id: newId(),
      workspaceId: ws,
      userId: existing.id,
      connectionId: ids.connection,
      source: `connection:${ids.connection}`,
      issuer: ACME_ISSUER,
      subject: "existing-subject",
      createdAt: h.clock.now(),
    });
    const linked = await create(acme, entraUser("existing@acme.test", "existing-subject"));
    const account = await accountOf(h, ws, linked.id);
    expect(account).toMatchObject({ managed: false, user: { id: existing.id } });
    // The account keeps its own password: the directory did not create it.
    expect(account!.user.passwordHash).not.toBeNull();
  });

  it("requires the subject attribute when the directory has a connection", async () => {
    const { externalId: _, ...body } = entraUser("nosubject@acme.test", "x");
    const res = await acme("POST", "/Users", body);
    expect(res.status).toBe(400);
    expect((await json(res)).detail).toContain("externalId is required");
  });

  it("refuses bodies that are not SCIM JSON objects, without a 500", async () => {
    expect((await acme("POST", "/Users", "not json")).status).toBe(400);
    expect((await acme("POST", "/Users", "[]")).status).toBe(400);
    expect((await acme("POST", "/Users", entraUser("x@acme.test", "y"), { "content-type": "text/plain" })).status).toBe(415);
    expect((await acme("POST", "/Users", { userName: "" })).status).toBe(400);
    expect((await acme("POST", "/Users", { userName: "no-address" })).status).toBe(400);
    expect((await acme("POST", "/Users", { ...entraUser("nul@acme.test", "nul"), displayName: "a\u0000b" })).status).toBe(400);
    // Half a surrogate pair (JSON's "\ud800"), in a value or a name: no character the database can store.
    expect((await acme("POST", "/Users", { ...entraUser("half@acme.test", "\ud800") })).status).toBe(400);
    expect((await acme("POST", "/Users", { ...entraUser("half2@acme.test", "half2"), ["x\udc00"]: "y" })).status).toBe(400);
    expect((await acme("POST", "/Users", { ...entraUser("big@acme.test", "big"), title: "x".repeat(300 * 1024) })).status).toBe(413);
  });
});

describe("reading and filtering", () => {
  let bob: Record<string, any>;
  beforeAll(async () => {
    bob = await create(globex, { ...oktaUser("Bob.Builder@globex.test", "bob-ext", "Bob", "Builder"), emails: [{ value: "bob@globex.test", type: "work", primary: true }, { value: "bob.home@elsewhere.test", type: "home" }] });
    for (let i = 0; i < 5; i++) await create(globex, oktaUser(`page${i}@globex.test`, `page-${i}`, `Page${i}`, "Person"));
  });

  it("GET by id answers with its ETag, and 304 when If-None-Match names it", async () => {
    const res = await globex("GET", `/Users/${bob.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe('W/"1"');
    expect((await globex("GET", `/Users/${bob.id}`, undefined, { "if-none-match": 'W/"1"' })).status).toBe(304);
    expect((await globex("GET", `/Users/${bob.id}`, undefined, { "if-none-match": 'W/"2"' })).status).toBe(200);
  });

  const filter = async (f: string) => {
    const res = await globex("GET", `/Users?filter=${encodeURIComponent(f)}`);
    expect(res.status, f).toBe(200);
    return (await json(res)).Resources.map((r: { userName: string }) => r.userName).sort();
  };

  it("filters with eq, co, sw, ew, pr, and, or, not on userName, externalId, emails and displayName, case-insensitively", async () => {
    expect(await filter('userName eq "bob.builder@GLOBEX.test"')).toEqual(["Bob.Builder@globex.test"]);
    expect(await filter('externalId eq "bob-ext"')).toEqual(["Bob.Builder@globex.test"]);
    expect(await filter('emails.value eq "BOB.HOME@elsewhere.test"')).toEqual(["Bob.Builder@globex.test"]);
    expect(await filter('emails[type eq "work" and value co "bob@"]')).toEqual(["Bob.Builder@globex.test"]);
    expect(await filter('emails[type eq "home" and value sw "page"]')).toEqual([]);
    expect(await filter('displayName sw "page" and userName ew "3@globex.test"')).toEqual(["page3@globex.test"]);
    expect(await filter('userName eq "page1@globex.test" or userName eq "page2@globex.test"')).toEqual(["page1@globex.test", "page2@globex.test"]);
    expect(await filter('userName co "page" and not (userName eq "page0@globex.test")')).toEqual(["page1@globex.test", "page2@globex.test", "page3@globex.test", "page4@globex.test"]);
    expect(await filter('name.givenName eq "bob"')).toEqual(["Bob.Builder@globex.test"]);
    expect(await filter('userName co "100%_"')).toEqual([]);
    expect(await filter('externalId eq "BOB-EXT"')).toEqual([]);
  });

  it("refuses a filter that does not parse or names what cannot be filtered (400 invalidFilter)", async () => {
    for (const f of ['userName eq', 'nickName eq "x"', 'userName zz "x"', 'active eq "maybe"']) {
      const res = await globex("GET", `/Users?filter=${encodeURIComponent(f)}`);
      expect(res.status, f).toBe(400);
      expect(await json(res)).toMatchObject({ scimType: "invalidFilter" });
    }
  });

  it("pages with startIndex and count; count=0 answers only the total", async () => {
    const all = await json(await globex("GET", `/Users?filter=${encodeURIComponent('userName sw "page"')}`));
    expect(all.totalResults).toBe(5);
    const page = await json(await globex("GET", `/Users?filter=${encodeURIComponent('userName sw "page"')}&startIndex=2&count=2`));
    expect(page).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect(page.Resources.map((r: { userName: string }) => r.userName)).toEqual(all.Resources.slice(1, 3).map((r: { userName: string }) => r.userName));
    expect(await json(await globex("GET", "/Users?count=0"))).toMatchObject({ itemsPerPage: 0, Resources: [] });
    expect((await globex("GET", "/Users?count=abc")).status).toBe(400);
  });

  it("attributes and excludedAttributes choose what is returned; id, schemas and meta always are", async () => {
    const only = await json(await globex("GET", `/Users/${bob.id}?attributes=userName`));
    expect(Object.keys(only).sort()).toEqual(["id", "meta", "schemas", "userName"]);
    const without = await json(await globex("GET", `/Users/${bob.id}?excludedAttributes=emails,name`));
    expect(without.emails).toBeUndefined();
    expect(without.userName).toBe("Bob.Builder@globex.test");
  });
});

const PATCH_SCHEMA = ["urn:ietf:params:scim:api:messages:2.0:PatchOp"];

describe("replacing and patching", () => {
  it("applies Microsoft Entra's PATCH shapes: capitalised op, a filtered email path, booleans as strings, the enterprise extension", async () => {
    const user = await create(acme, entraUser("carol@acme.test", "carol-id"));
    const res = await acme("PATCH", `/Users/${user.id}`, {
      schemas: PATCH_SCHEMA,
      Operations: [
        { op: "Replace", path: 'emails[type eq "work"].value', value: "carol.new@acme.test" },
        { op: "Replace", path: "name.givenName", value: "Carol" },
        { op: "Add", path: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", value: "Research" },
        { op: "Add", path: 'phoneNumbers[type eq "mobile"].value', value: "+1 555 0100" },
        { op: "Replace", path: "displayName", value: "Carol C" },
      ],
    });
    expect(res.status).toBe(200);
    const patched = await json(res);
    expect(patched.emails).toEqual([{ primary: true, type: "work", value: "carol.new@acme.test" }]);
    expect(patched.name).toMatchObject({ givenName: "Carol", familyName: "familyName" });
    expect(patched["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"]).toEqual({ department: "Research" });
    expect(patched.phoneNumbers).toEqual([{ type: "mobile", value: "+1 555 0100" }]);
    expect(patched.meta.version).toBe('W/"2"');
    // The account the directory manages follows its address and name.
    expect((await accountOf(h, ws, user.id))!.user).toMatchObject({ emailNormalized: "carol.new@acme.test", name: "Carol C" });
    // Read back exactly as written.
    expect(await json(await acme("GET", `/Users/${user.id}`))).toEqual(patched);
    expect((await auditRows(h, ws, "scim.user.updated")).some((r) => JSON.stringify(r.data).includes("phoneNumbers"))).toBe(true);
  });

  it("applies Okta's PATCH shapes: a path-less value object, and replace active false", async () => {
    const user = await create(globex, oktaUser("dave@globex.test", "dave-id"));
    const res = await globex("PATCH", `/Users/${user.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", value: { "name.familyName": "Dave", title: "Engineer" } }] });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ name: { givenName: "Test", familyName: "Dave" }, title: "Engineer" });
    const off = await globex("PATCH", `/Users/${user.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", value: { id: user.id, active: false } }] });
    expect(await json(off)).toMatchObject({ id: user.id, active: false });
  });

  it("refuses operations it cannot apply (400) and leaves the user as it was", async () => {
    const user = await create(globex, oktaUser("erin@globex.test", "erin-id"));
    for (const body of [
      { schemas: PATCH_SCHEMA, Operations: [] },
      { schemas: PATCH_SCHEMA, Operations: [{ op: "move", path: "title", value: "x" }] },
      { schemas: PATCH_SCHEMA, Operations: [{ op: "remove" }] },
      { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: "emails[type eq", value: "x" }] },
      { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: 'emails[value co "x"].value', value: "x" }] },
      { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: "title", value: "ok" }, { op: "replace", path: "userName", value: "" }] },
      { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: "active", value: "perhaps" }] },
    ]) {
      const res = await globex("PATCH", `/Users/${user.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await json(await globex("GET", `/Users/${user.id}`))).toMatchObject({ meta: { version: 'W/"1"' } });
    expect((await json(await globex("GET", `/Users/${user.id}`))).title).toBeUndefined();
  });

  it("PUT replaces the whole user; If-Match with another version is 412 and changes nothing", async () => {
    const user = await create(globex, oktaUser("fay@globex.test", "fay-id"));
    const stale = await globex("PUT", `/Users/${user.id}`, { ...oktaUser("fay@globex.test", "fay-id"), title: "Stale" }, { "if-match": 'W/"7"' });
    expect(stale.status).toBe(412);
    const res = await globex("PUT", `/Users/${user.id}`, { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "fay@globex.test", externalId: "fay-id", title: "Lead" }, { "if-match": 'W/"1"' });
    expect(res.status).toBe(200);
    const replaced = await json(res);
    expect(replaced.title).toBe("Lead");
    expect(replaced.name).toBeUndefined();
    expect(res.headers.get("etag")).toBe('W/"2"');
  });

  it("a changed subject moves the connection's identity with it", async () => {
    const user = await create(acme, entraUser("gus@acme.test", "gus-old"));
    await acme("PATCH", `/Users/${user.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: "externalId", value: "gus-new" }] });
    const account = await accountOf(h, ws, user.id);
    const identities = await h.service.db.select({ subject: federatedIdentities.subject }).from(federatedIdentities).where(and(eq(federatedIdentities.workspaceId, ws), eq(federatedIdentities.userId, account!.user.id)));
    expect(identities).toEqual([{ subject: "gus-new" }]);
  });
});

describe("deactivating and deleting", () => {
  async function liveSession(userId: string, organizationId: string | null) {
    const id = newId();
    const now = h.clock.now();
    await h.service.db.insert(hostedSessions).values({
      id,
      workspaceId: ws,
      userId,
      secretHash: "x",
      evidence: [],
      authTime: now,
      acr: "0",
      organizationId,
      createdAt: now,
      lastSeenAt: now,
      idleExpiresAt: new Date(now.getTime() + 3_600_000),
      absoluteExpiresAt: new Date(now.getTime() + 86_400_000),
    } as typeof hostedSessions.$inferInsert);
    return id;
  }
  const ended = async (id: string) => (await h.service.db.select({ endedAt: hostedSessions.endedAt }).from(hostedSessions).where(eq(hostedSessions.id, id)))[0].endedAt !== null;

  it("active false disables an account the directory manages, ends every session, and leaves the organization; active true brings the membership back", async () => {
    const user = await create(acme, entraUser("hal@acme.test", "hal-id"));
    const account = (await accountOf(h, ws, user.id))!.user;
    const session = await liveSession(account.id, null);
    const res = await acme("PATCH", `/Users/${user.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "Replace", path: "active", value: "False" }] });
    expect(res.status).toBe(200);
    expect((await accountOf(h, ws, user.id))!.user.status).toBe("disabled");
    expect(await ended(session)).toBe(true);
    expect(await isMember(h, ws, ids.acme, account.id)).toBe(false);
    const event = (await auditRows(h, ws, "scim.user.deactivated")).find((e) => e.subject === account.id);
    expect(event).toMatchObject({ data: expect.objectContaining({ organization: ACME, managed: true, sessions_ended: 1 }) });
    await acme("PATCH", `/Users/${user.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: "active", value: true }] });
    expect((await accountOf(h, ws, user.id))!.user.status).toBe("active");
    expect(await isMember(h, ws, ids.acme, account.id)).toBe(true);
    // An ended session stays ended.
    expect(await ended(session)).toBe(true);
  });

  it("an account the directory did not create keeps its other sessions: only those through the organization end", async () => {
    const [existing] = await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, "existing@acme.test")));
    const [row] = await h.service.db.select().from(scimUsers).where(and(eq(scimUsers.workspaceId, ws), eq(scimUsers.userId, existing.id)));
    const own = await liveSession(existing.id, null);
    const through = await liveSession(existing.id, ids.acme);
    await acme("PATCH", `/Users/${row.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", value: { active: false } }] });
    expect(await ended(through)).toBe(true);
    expect(await ended(own)).toBe(false);
    expect((await accountOf(h, ws, row.id))!.user.status).toBe("active");
    expect(await isMember(h, ws, ids.acme, existing.id)).toBe(false);
  });

  it("DELETE deprovisions and deletes an account the directory created; the id is then unknown", async () => {
    const user = await create(acme, entraUser("ivy@acme.test", "ivy-id"));
    const account = (await accountOf(h, ws, user.id))!.user;
    expect((await acme("DELETE", `/Users/${user.id}`)).status).toBe(204);
    expect(await h.service.db.select().from(users).where(eq(users.id, account.id))).toEqual([]);
    expect((await acme("GET", `/Users/${user.id}`)).status).toBe(404);
    expect((await acme("DELETE", `/Users/${user.id}`)).status).toBe(404);
    // The same person provisioned again is a new account.
    await create(acme, entraUser("ivy@acme.test", "ivy-id"));
  });
});

describe("concurrency", () => {
  it("the same user created many times at once is one user and one account", async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => acme("POST", "/Users", entraUser("race@acme.test", "race-id"))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 409)).toBe(true);
    expect(await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, "race@acme.test")))).toHaveLength(1);
    expect(await h.service.db.select().from(scimUsers).where(and(eq(scimUsers.workspaceId, ws), eq(scimUsers.userNameKey, "race@acme.test")))).toHaveLength(1);
  });
});
