/**
 * The route table's bindings to Next's route files (app/t/[tenant]/…/route.ts, through
 * lib/server/next-adapter.ts): every route of the table is bound by exactly one route file, a
 * path's own or a catch-all's below which it lies; every factor answered by a typed code
 * (lib/authn/factors/contract.ts `TypedCodeAnswer`) has its sign-in step and its portal
 * verification in the table, bound by the catch-alls below /sign-in and /account/verify; those
 * catch-alls answer a table path as its own binding would and any other path exactly as the
 * issuer's catch-all of unknown paths does (app/t/[tenant]/[...rest]/route.ts, with the HEAD and
 * OPTIONS Next gives that file).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { autoImplementMethods } from "next/dist/server/route-modules/app-route/helpers/auto-implement-methods";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { TYPED_CODE_FACTORS } from "../../lib/authn/factors/registry";
import { pathsBelow, routeHandlers, routesBelow } from "../../lib/server/next-adapter";
import { findRoute, routes } from "../../lib/server/router";
import * as unknownPaths from "../../app/t/[tenant]/[...rest]/route";
import * as signInSteps from "../../app/t/[tenant]/sign-in/[...step]/route";
import * as portalVerification from "../../app/t/[tenant]/account/verify/[...method]/route";
import { createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { standardWorkspace } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("bindings");

// The route files reach the service through getService (lib/service.ts): hand them this file's.
vi.mock("../../lib/service", async (original) => ({ ...(await original<typeof import("../../lib/service")>()), getService: async () => h.service }));

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

const root = path.resolve(import.meta.dirname, "..", "..");
const ISSUER_DIR = "app/t/[tenant]";

interface RouteFile {
  /** The issuer path of its folder (`/oauth2/token`; a catch-all's: the folder it is in, "" for the issuer's own). */
  path: string;
  catchAll: boolean;
  /** An optional catch-all (`[[...path]]`): it binds its folder's path and every path below it, for a route that answers below its own (`Route.below`). */
  optional: boolean;
  source: string;
}

function routeFiles(): RouteFile[] {
  const out: RouteFile[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(root, ISSUER_DIR, rel), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(`${rel}/${entry.name}`);
      else if (entry.name === "route.ts") {
        const segments = rel.split("/").filter(Boolean);
        const optional = segments.at(-1)?.startsWith("[[...") ?? false;
        const catchAll = !optional && (segments.at(-1)?.startsWith("[...") ?? false);
        out.push({ path: `/${(catchAll || optional ? segments.slice(0, -1) : segments).join("/")}`.replace(/^\/$/, ""), catchAll, optional, source: readFileSync(path.join(root, ISSUER_DIR, rel, entry.name), "utf8") });
      }
    }
  };
  walk("");
  return out;
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
type Method = (typeof METHODS)[number];
type Handlers = Record<Method, (request: Request, context: { params: Promise<{ tenant: string }> }) => Response | Promise<Response>>;

/** What Next answers for the issuer's catch-all of unknown paths: its handlers, HEAD and OPTIONS as Next implements them. */
const nextUnknownPaths = autoImplementMethods(unknownPaths as unknown as Parameters<typeof autoImplementMethods>[0]) as unknown as Handlers;

async function answer(handlers: Handlers, method: Method, subpath: string) {
  const request = new Request(`${PUBLIC_URL}/t/${ws}${subpath}`, { method, ...(method === "GET" || method === "HEAD" ? {} : { body: "" }) });
  const res = await handlers[method](request, { params: Promise.resolve({ tenant: ws }) });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}

describe("the route files", () => {
  const files = routeFiles();

  it("find one route per method and path: a path a factor declares cannot take another route's place", () => {
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
  });

  it("bind every route of the table exactly once: by its own file or by the one catch-all below which it lies", () => {
    for (const route of routes) {
      const binding = files.filter((f) => (f.catchAll ? f.path !== "" && route.path.startsWith(`${f.path}/`) : f.optional ? route.below === true && f.path === route.path : f.path === route.path));
      expect(binding.map((f) => f.path), route.path).toHaveLength(1);
    }
  });

  it("bind the paths they lie at: a path's file its own, a catch-all the table's paths below its folder", () => {
    for (const file of files) {
      if (file.path === "") expect(file.source).not.toMatch(/routeHandlers|routesBelow/);
      else if (file.catchAll) expect(file.source, file.path).toContain(`routesBelow("${file.path}")`);
      else if (file.optional) expect(file.source, file.path).toContain(`routeHandlers("${file.path}")`);
      else expect(file.source, file.path).toContain(`routeHandlers("${file.path}")`);
    }
    expect(files.filter((f) => f.catchAll).map((f) => f.path).sort()).toEqual(["", "/account/verify", "/organization-admin", "/sign-in"]);
  });
});

describe("a factor answered by a typed code", () => {
  it("is registered (an authenticator app, recovery codes; each further one is checked below as they are)", () => {
    expect(TYPED_CODE_FACTORS.map((f) => f.folder)).toEqual(expect.arrayContaining(["totp", "recovery-codes"]));
  });

  for (const factor of TYPED_CODE_FACTORS) {
    it(`${factor.folder}: has its sign-in step and its portal verification in the table, bound by the catch-alls`, () => {
      const { signInPath, portalPath } = factor.answer;
      expect(findRoute("POST", signInPath), signInPath).toMatchObject({ method: "POST", path: signInPath, machine: false, errors: "hosted" });
      expect(findRoute("POST", portalPath), portalPath).toMatchObject({ method: "POST", path: portalPath, machine: false, errors: "hosted" });
      expect(pathsBelow("/sign-in")).toContain(signInPath);
      expect(pathsBelow("/account/verify")).toContain(portalPath);
    });
  }

  it("keeps the paths the pages post to", () => {
    const paths = TYPED_CODE_FACTORS.map((f) => [f.answer.signInPath, f.answer.portalPath]);
    expect(paths).toContainEqual(["/sign-in/totp", "/account/verify/totp"]);
    expect(paths).toContainEqual(["/sign-in/recovery-code", "/account/verify/recovery-code"]);
    // One step below each catch-all, each factor's own: no two factors post to the same path.
    for (const [signInPath, portalPath] of paths) {
      expect(signInPath).toMatch(/^\/sign-in\/[a-z-]+$/);
      expect(portalPath).toMatch(/^\/account\/verify\/[a-z-]+$/);
    }
    expect(new Set(paths.flat()).size).toBe(paths.length * 2);
  });
});

describe("the catch-all bindings", () => {
  const bindings = [
    { prefix: "/sign-in", handlers: signInSteps as Handlers },
    { prefix: "/account/verify", handlers: portalVerification as Handlers },
  ] as const;

  it("bind the table's paths below their folder, and only those", () => {
    expect(pathsBelow("/sign-in").sort()).toEqual(routes.filter((r) => r.path.startsWith("/sign-in/")).map((r) => r.path).sort());
    // The portal's own verifications, and one per factor answered by a typed code.
    expect(pathsBelow("/account/verify").sort()).toEqual(
      ["/account/verify/email", "/account/verify/email/code", "/account/verify/password", "/account/verify/webauthn", ...TYPED_CODE_FACTORS.map((f) => f.answer.portalPath)].sort(),
    );
    expect(() => routesBelow("/no-such-folder")).toThrow();
  });

  for (const { prefix, handlers } of bindings) {
    it(`${prefix}: answer each table path below it, every method, as the path's own binding does`, async () => {
      for (const subpath of pathsBelow(prefix)) {
        const own = routeHandlers(subpath) as Handlers;
        for (const method of METHODS) expect(await answer(handlers, method, subpath), `${method} ${subpath}`).toEqual(await answer(own, method, subpath));
      }
    });

    it(`${prefix}: answer any other path below it, every method, as Next answers an unknown path`, async () => {
      const others = [`${prefix}/carrier-pigeon`, `${prefix}/totp/more`, `${prefix}/TOTP`, `${prefix}/t%6Ftp`, `${prefix}/totp%2Fenroll`, `${prefix}/password/x/y`];
      for (const subpath of others) {
        for (const method of METHODS) {
          const expected = await answer(nextUnknownPaths, method, subpath);
          expect(await answer(handlers, method, subpath), `${method} ${subpath}`).toEqual(expected);
          expect(expected.status, `${method} ${subpath}`).toBe(method === "OPTIONS" ? 204 : 404);
        }
      }
    });
  }
});
