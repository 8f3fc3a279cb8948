/**
 * Request limits declared beside their routes (lib/http/route.ts `limits`), enforced by the route
 * runner through the one limiter: every route that declares the per-client limit counts a
 * successful client authentication on it, across addresses, and answers 429 in its own shape.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { WEB, standardWorkspace } from "../helpers/fixtures";
import { CLIENT_ADDRESS_HEADER } from "../../lib/http/client-address";
import { CLIENT_REQUESTS } from "../../lib/oauth/clients";
import { findRoute, routes } from "../../lib/server/router";
import { REQUEST_LIMITS } from "../../lib/server/limits";

const PER_MINUTE = 3;
let h: Harness;
const ws = uniqueWorkspaceId("route-limits");

beforeAll(async () => {
  h = await createHarness({ rateLimits: { requestsPerMinute: PER_MINUTE, failuresPer5Minutes: 1000 } });
  await seed(h, standardWorkspace(ws));
});

/** The routes whose endpoint authenticates clients. */
const AUTHENTICATING = ["/oauth2/token", "/oauth2/revoke", "/oauth2/introspect", "/auth/account/configuration", "/auth/account/launch", "/auth/account/approve", "/oauth2/device_authorization", "/oauth2/par"];
const declaring = routes.filter((r) => r.limits?.includes(CLIENT_REQUESTS));

/** The body of the answer: its error code, in the route's family (OAuth or handoff). */
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

describe("the per-client limit, declared beside its routes", () => {
  it("is declared by the routes that authenticate clients, and the table of limits lists them", () => {
    expect(declaring.map((r) => `${r.method} ${r.path}`).sort()).toEqual(AUTHENTICATING.map((path) => `POST ${path}`).sort());
    const listed = REQUEST_LIMITS.find((d) => d.limits === CLIENT_REQUESTS)!;
    for (const r of declaring) expect(listed.declaredIn).toContain(`\`${r.method} ${r.path}\``);
  });

  it.each(AUTHENTICATING.map((path) => [`POST ${path}`, findRoute("POST", path)!] as const))("%s counts each authenticated request of the client, from any address, then answers 429 with Retry-After", async (_, route) => {
    // The previous case's counts reach the database first; then a new window.
    await h.service.limiter.flush();
    h.clock.advance(60_000);
    const handoff = route.errors === "account-security";
    const form: Record<string, string> = route.path === "/oauth2/token" ? { grant_type: "client_credentials" } : { token: "x" };
    const send = (i: number) =>
      call(h, `/t/${ws}${route.path}${handoff ? `?client_id=${WEB.client_id}` : ""}`, {
        method: "POST",
        ...(handoff ? { body: "{}" } : { form }),
        headers: { ...(handoff ? { "content-type": "application/json" } : {}), authorization: basic(WEB.client_id, WEB.secret), [CLIENT_ADDRESS_HEADER]: `10.9.${i}.1` },
      });
    for (let i = 0; i < PER_MINUTE; i++) expect((await send(i)).status).not.toBe(429);
    const limited = await send(PER_MINUTE);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await errorOf(limited)).toBe(handoff ? "RATE_LIMITED" : "rate_limited");
  });
});
