/**
 * U+0000 cannot be stored in PostgreSQL text: every route refuses it at the edge with its own 400
 * (never a 500), whatever the token, and a database refusal that slips through is a 400 too. The
 * log never carries a statement's parameters.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { sql } from "drizzle-orm";
import { openDatabase, type DatabaseHandle } from "../../db/client";
import { loggableError } from "../../lib/http/errors";
import { errorToResponse } from "../../lib/oauth/errors";
import { runEndpoint, type Route } from "../../lib/server/router";
import { authorizeQuery, basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, API, SPA, WEB, standardWorkspace } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("nul");
const NUL = "a\u0000b";
const ENCODED = "a%00b";

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

let logged: string[] = [];
beforeAll(() => {
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    logged.push(args.map(String).join(" "));
  });
});
afterEach(() => {
  logged = [];
});
afterAll(() => {
  vi.restoreAllMocks();
});

async function expectOAuth400(res: Response) {
  expect(res.status).toBe(400);
  expect(res.headers.get("content-type")).toContain("application/json");
  expect((await res.json()).error).toBe("invalid_request");
}

async function expectHosted400(res: Response) {
  expect(res.status).toBe(400);
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  expect(res.headers.get("location")).toBeNull();
}

describe("U+0000 in client input is refused at the edge with each route's own 400", () => {
  it("discovery and JWKS", async () => {
    for (const path of [`/.well-known/openid-configuration?client_id=${ENCODED}`, `/.well-known/jwks.json?client_id=${ENCODED}`, `/.well-known/openid-configuration?${ENCODED}=1`]) {
      const res = await call(h, `/t/${ws}${path}`);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      await expectOAuth400(res);
    }
  });

  it("authorize, before and after the client is known: the hosted page", async () => {
    await expectHosted400(await call(h, `/t/${ws}/oauth2/authorize?client_id=${ENCODED}`));
    const { query } = authorizeQuery({ ...SPA, scope: "openid read:things", resource: NUL });
    await expectHosted400(await call(h, `/t/${ws}/oauth2/authorize?${query}`));
  });

  it("logout: the hosted page", async () => {
    await expectHosted400(await call(h, `/t/${ws}/oidc/logout?client_id=${ENCODED}&post_logout_redirect_uri=https%3A%2F%2Fapp.example.test%2F`));
    await expectHosted400(await call(h, `/t/${ws}/oidc/logout?client_id=${SPA.client_id}&post_logout_redirect_uri=${ENCODED}`));
  });

  it("the token endpoint: in a body client_id, a value and a name", async () => {
    await expectOAuth400(await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "lkr_x", client_id: NUL } }));
    await expectOAuth400(await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "client_credentials", resource: NUL, scope: "read:things" }, headers: { authorization: basic("m2m", "x") } }));
    await expectOAuth400(await call(h, `/t/${ws}/oauth2/token`, { form: `grant_type=refresh_token&refresh_token=lkr_x&client_id=spa&${ENCODED}=1` }));
  });

  it("the token endpoint: in the Basic client id, a client error whichever check meets it", async () => {
    const res = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "client_credentials", resource: API, scope: "read:things" }, headers: { authorization: basic(NUL, "x") } });
    expect([400, 401]).toContain(res.status);
    expect(logged.join("\n")).not.toContain("internal error");
  });

  it("revocation and introspection", async () => {
    await expectOAuth400(await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: NUL, client_id: SPA.client_id } }));
    await expectOAuth400(await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: "lkr_x", client_id: NUL } }));
    await expectOAuth400(await call(h, `/t/${ws}/oauth2/introspect`, { form: { token: NUL }, headers: { authorization: basic(WEB.client_id, WEB.secret) } }));
  });

  it("the permission check, even without a valid token: its own problem shape", async () => {
    for (const body of [
      { resource: API, permission: NUL, organization_id: null },
      { resource: API, permission: "read:things", organization_id: NUL },
      { resource: NUL, permission: "read:things", organization_id: null },
    ]) {
      for (const authorization of ["Bearer lka_not-a-token", undefined]) {
        const res = await call(h, `/t/${ws}/authorization/check`, {
          method: "POST",
          body: JSON.stringify(body),
          headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        });
        expect(res.status).toBe(400);
        expect(res.headers.get("content-type")).toContain("application/problem+json");
        expect((await res.json()).type).toBe("urn:latchkey:authorization-check:bad_request");
      }
    }
  });

  it("logs nothing for any of them", async () => {
    await call(h, `/t/${ws}/.well-known/openid-configuration?client_id=${ENCODED}`);
    await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "lkr_x", client_id: NUL } });
    expect(logged).toEqual([]);
  });
});

describe("a database refusal of text", () => {
  async function refusal(statement: ReturnType<typeof sql>): Promise<unknown> {
    try {
      await h.service.db.execute(statement);
    } catch (error) {
      return error;
    }
    throw new Error("the database accepted it");
  }

  it("is a 400 invalid_request, never a 500: U+0000 in text (22021) and in jsonb (22P05)", async () => {
    for (const error of [await refusal(sql`select ${NUL}::text`), await refusal(sql`select ${'["\\u0000"]'}::jsonb`)]) {
      const res = errorToResponse(error);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "invalid_request", error_description: "A parameter contains a character that is not accepted (U+0000)" });
    }
    expect(logged).toEqual([]);
  });

  it("outside an endpoint's own handling, is a 400 in the route's own shape: hosted page, problem document, OAuth JSON", async () => {
    const error = await refusal(sql`select ${NUL}::text`);
    const failing = async (): Promise<Response> => {
      throw error;
    };
    const answer = (errors: Route["errors"]) => runEndpoint({ method: "POST", path: "/x", endpoint: failing, machine: false, errors }, new Request(`https://h/t/${ws}/x`, { method: "POST" }), h.service, ws);
    const hosted = await answer("hosted");
    expect([hosted.status, hosted.headers.get("content-type")]).toEqual([400, expect.stringContaining("text/html")]);
    const problem = await answer("problem");
    expect([problem.status, (await problem.json()).type]).toEqual([400, "urn:latchkey:authorization-check:bad_request"]);
    const oauth = await answer("oauth");
    expect([oauth.status, (await oauth.json()).error]).toEqual([400, "invalid_request"]);
    expect(logged).toEqual([]);
  });
});

describe("the log of a failed statement", () => {
  let down: DatabaseHandle;
  beforeAll(async () => {
    // Nothing listens on port 9: every query fails to connect.
    down = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:9/latchkey" });
  });
  afterAll(async () => down.close());

  it("names the statement but never its parameters", async () => {
    let failure: unknown;
    try {
      await down.db.execute(sql`select ${ADA.email}::text as email`);
    } catch (error) {
      failure = error;
    }
    expect(String((failure as Error).message)).toContain(ADA.email); // what the driver wrapper carries
    expect(loggableError(failure)).toContain("select $1::text");
    expect(loggableError(failure)).not.toContain(ADA.email);
    expect(errorToResponse(failure).status).toBe(503);
    expect(logged.join("\n")).toContain("dependency failure");
    expect(logged.join("\n")).not.toContain(ADA.email);
    // A bug's 500 as well.
    logged = [];
    expect(errorToResponse(new Error("Failed query: select 1", { cause: failure })).status).toBe(503);
    const bug = Object.assign(new Error(`Failed query: select $1\nparams: ${ADA.email}`), { query: "select $1", params: [ADA.email] });
    expect(errorToResponse(bug).status).toBe(500);
    expect(logged.join("\n")).toContain("internal error");
    expect(logged.join("\n")).not.toContain(ADA.email);
  });
});
