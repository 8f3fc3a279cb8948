/**
 * docs/account-security.md teaches the backend handoff with the example application's code: every
 * TypeScript block of its "The backend handoff" section must appear, verbatim, in
 * e2e/customer-app.ts (the code the end-to-end tests run), so the guide cannot drift from it.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..");
const guide = readFileSync(path.join(root, "docs", "account-security.md"), "utf8");
const example = readFileSync(path.join(root, "e2e", "customer-app.ts"), "utf8");

function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section "${heading}"`);
  const end = markdown.indexOf("\n## ", start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

const handoff = section(guide, "The backend handoff: integrating your server");
const snippets = [...handoff.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);

describe("docs/account-security.md: the backend handoff's code", () => {
  it("quotes the example application's routes", () => {
    expect(snippets.length).toBeGreaterThanOrEqual(5);
    const quoted = snippets.join("\n");
    for (const name of ["handoffCall", "userToken", "accountSecurityStart", "takePendingLaunch", "accountSecurityCallback"]) {
      expect(quoted).toMatch(new RegExp(`function ${name}\\(`));
    }
  });

  it.each(snippets.map((snippet) => [snippet.split("\n")[0]!, snippet]))("%s … is in e2e/customer-app.ts verbatim", (_first, snippet) => {
    expect(example.includes(snippet)).toBe(true);
  });

  it("names the example's registered routes as the ones the service is given", () => {
    for (const route of ["/account-security/start", "/account-security/callback", "/settings/security"]) {
      expect(handoff).toContain(`\`${route}\``);
      expect(example).toContain(route);
    }
  });
});
