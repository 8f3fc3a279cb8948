/**
 * Every state-changing request Next answers follows the same-origin rule of every form post, in
 * proxy.ts before Next handles it, however it is encoded: a server action from Next's client
 * (`Next-Action`), the multipart form a browser without JavaScript posts with the page's
 * `$ACTION_*` fields (no `Next-Action`), an urlencoded post. A foreign, sibling, other-port or
 * other-scheme Origin, `Origin: null` without `Sec-Fetch-Site: same-origin`, and a request saying
 * neither answer 403 and never reach Next (so nothing runs); one from the site's own pages goes on
 * to Next with the site's origin as `Origin`, also when the browser said `null` (Next alone
 * answers that with a 500). tests/dispatch/console-forms.test.ts sends the same through the
 * production server and counts what was written.
 */
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { proxy } from "../../proxy";

const SITE = "https://auth.example.test";
const HOSTNAME_SITE = "https://login.acme.test";

beforeAll(() => {
  vi.stubEnv("PUBLIC_URL", SITE);
  vi.stubEnv("TRUST_PROXY", "");
});
afterAll(() => {
  vi.unstubAllEnvs();
});

const BOUNDARY = "----formdata-latchkey-0123456789";

/** The three ways a browser sends a console form. */
const ENCODINGS: Record<string, { headers: Record<string, string>; body: string }> = {
  // Next's client: the action's id in a header, the arguments as the body.
  "Next-Action": { headers: { "next-action": "7f3a9c0d1e2b", "content-type": "text/plain;charset=UTF-8" }, body: '["$K1"]' },
  // A browser without JavaScript: the page's form as it is, the action named by its hidden fields.
  "no-JS multipart ($ACTION_* fields)": {
    headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    body: [
      ["$ACTION_REF_1", ""],
      ["$ACTION_1:0", '{"id":"7f3a9c0d1e2b","bound":"$@1"}'],
      ["$ACTION_1:1", '["createRole","acme"]'],
      ["$ACTION_KEY", "k1234567890"],
      ["name", "attacker"],
    ]
      .map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join("")
      .concat(`--${BOUNDARY}--\r\n`),
  },
  "no-JS urlencoded ($ACTION_ID_*)": { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "%24ACTION_ID_7f3a9c0d1e2b=&name=attacker" },
};

function post(url: string, headers: Record<string, string>, encoding: string, method = "POST") {
  const { headers: encoded, body } = ENCODINGS[encoding];
  return proxy(new NextRequest(url, { method, headers: { ...encoded, ...headers }, body: method === "GET" || method === "HEAD" ? undefined : body }));
}

/** Proxy let the request through to Next (NextResponse.next()). */
const passedOn = (response: Response) => response.headers.get("x-middleware-next") === "1";
/** The Origin Next is given (proxy.ts overrides the request's headers). */
const originAtNext = (response: Response) => response.headers.get("x-middleware-request-origin");

const REFUSED: [string, Record<string, string>][] = [
  ["from another site", { origin: "https://evil.example" }],
  ["from another site claiming same-origin", { origin: "https://evil.example", "sec-fetch-site": "same-origin" }],
  ["from a sibling subdomain", { origin: "https://other.example.test", "sec-fetch-site": "same-site" }],
  ["from a name that merely starts like ours", { origin: "https://auth.example.test.evil.example" }],
  ["from another port of our host", { origin: "https://auth.example.test:8443" }],
  ["from our host over http", { origin: "http://auth.example.test" }],
  ["with our Origin but Sec-Fetch-Site cross-site", { origin: SITE, "sec-fetch-site": "cross-site" }],
  ["with our Origin but Sec-Fetch-Site same-site", { origin: SITE, "sec-fetch-site": "same-site" }],
  ["with Origin: null alone (a sandboxed frame, a data: page)", { origin: "null" }],
  ["with Origin: null from another site", { origin: "null", "sec-fetch-site": "cross-site" }],
  ["saying neither where it came from", {}],
  ["without Origin, from a sibling site", { "sec-fetch-site": "same-site" }],
  ["with an Origin that is not an origin", { origin: "not a url" }],
  ["with an empty Origin", { origin: "" }],
];

const CONSOLE_PATHS = ["/console", "/console/setup", "/console/w/acme/roles", "/console/invitation", "/console/auth/sign-out"];
const HOSTED_PATHS = ["/t/acme/sign-in", "/t/acme/account", "/t/acme/no-such-page"];
/** What every unknown path under an issuer answers (lib/oauth/errors.ts). */
const GENERIC_NOT_FOUND = { error: "invalid_request", error_description: "Not found" };

describe("a state-changing request Next answers", () => {
  for (const encoding of Object.keys(ENCODINGS)) {
    describe(encoding, () => {
      it.each(REFUSED)("%s answers 403 before Next (under an issuer, the generic 404: no page there takes a change)", async (_what, headers) => {
        for (const path of CONSOLE_PATHS) {
          const response = post(`${SITE}${path}`, headers, encoding);
          expect([path, response.status, passedOn(response)]).toEqual([path, 403, false]);
          expect(await response.text()).toContain("Forbidden");
        }
        for (const path of HOSTED_PATHS) {
          const response = post(`${SITE}${path}`, headers, encoding);
          expect([path, response.status, passedOn(response)]).toEqual([path, 404, false]);
          expect(await response.json()).toEqual(GENERIC_NOT_FOUND);
        }
      });

      it("from the site's own pages goes on to Next, which is shown the site's origin", () => {
        const own: Record<string, string>[] = [{ origin: SITE }, { origin: SITE, "sec-fetch-site": "same-origin" }, { origin: "null", "sec-fetch-site": "same-origin" }, { "sec-fetch-site": "same-origin" }];
        for (const headers of own) {
          for (const path of CONSOLE_PATHS) {
            const response = post(`${SITE}${path}`, headers, encoding);
            expect([path, headers, passedOn(response), originAtNext(response)]).toEqual([path, headers, true, SITE]);
          }
        }
      });
    });
  }

  it("under an issuer, is judged against the host it was sent to (a workspace hostname serves its issuer too)", () => {
    const atHostname = (path: string, headers: Record<string, string>) => post(`${SITE}${path}`, { host: "login.acme.test", ...headers }, "no-JS multipart ($ACTION_* fields)");
    for (const path of HOSTED_PATHS) {
      const own: Record<string, string>[] = [{ origin: HOSTNAME_SITE }, { origin: "null", "sec-fetch-site": "same-origin" }];
      for (const headers of own) {
        const response = atHostname(path, headers);
        expect([path, passedOn(response), originAtNext(response)]).toEqual([path, true, HOSTNAME_SITE]);
      }
      // The default host's pages are another origin than the hostname's, and the other way round.
      const foreign: Record<string, string>[] = [{ origin: SITE }, { origin: "https://other.acme.test" }, { origin: "http://login.acme.test" }, { origin: "null" }, {}];
      for (const headers of foreign) {
        expect([path, headers, atHostname(path, headers).status]).toEqual([path, headers, 404]);
      }
      expect(post(`${SITE}${path}`, { host: "auth.example.test", origin: HOSTNAME_SITE }, "Next-Action").status).toBe(404);
    }
    // The console is the default host's only: a hostname's own origin is foreign to it.
    expect(atHostname("/console/w/acme/roles", { origin: HOSTNAME_SITE }).status).toBe(403);
  });

  it("every state-changing method is judged; reading is not", () => {
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      expect([method, post(`${SITE}/console/w/acme/roles`, { origin: "https://evil.example" }, "Next-Action", method).status]).toEqual([method, 403]);
    }
    for (const method of ["GET", "HEAD", "OPTIONS"]) {
      const response = proxy(new NextRequest(`${SITE}/console/w/acme/roles`, { method, headers: { origin: "https://evil.example" } }));
      expect([method, passedOn(response), originAtNext(response)]).toEqual([method, true, "https://evil.example"]);
    }
  });

  it("the route table's own paths are not Next's to judge: their endpoints declare the rule themselves", () => {
    const response = proxy(new NextRequest(`${SITE}/t/acme/sign-in/password`, { method: "POST", headers: { origin: "https://evil.example" }, body: "x" }));
    expect(passedOn(response)).toBe(true);
  });
});
