#!/usr/bin/env node
/**
 * How far each cross-cutting feature is spread: the source files outside the feature's homes (its
 * folder, its route files, its components) whose code names it. Comments are not counted (a
 * pointer such as "see lib/hostnames" is documentation, not a copy of the feature); the count with
 * comments is printed beside it. Tests, migrations and generated files are not source.
 *
 *   node scripts/feature-spread.mjs            counts, and the files outside each feature's homes
 *   node scripts/feature-spread.mjs --json     the same as JSON (tests/docs/feature-spread.test.ts)
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import ts from "typescript";

export const FEATURE_SPREAD = [
  {
    name: "factors",
    // A factor kind spelled as a value: where a kind is enumerated, switched on or labelled outside the factor.
    pattern: /["'`](totp|email_otp|email_code|recovery_codes?|webauthn)["'`]/,
    homes: ["lib/authn/factors/", "components/factors/", "db/schema/factors.ts"],
  },
  { name: "saml", pattern: /saml/i, homes: ["lib/federation/", "app/t/[tenant]/federation/", "components/federation/"] },
  { name: "hostnames", pattern: /hostnames/i, homes: ["lib/hostnames/", "app/console/(app)/w/[workspace]/hostnames/", "components/hostnames/", "db/schema/hostnames.ts"] },
  // Operator invitations (the console's operators); organizations' member invitations are measured on their own below.
  { name: "invitations", pattern: /operator[-_. ]?invitation|operators\/invitation|invitation[-_ ]?link/i, homes: ["lib/operators/", "app/console/(public)/invitation/", "components/operators/"] },
  // Organizations' member invitations: one feature folder.
  {
    name: "organization-invitations",
    pattern: /organization[-_ ]?invitation|invitation\\?\/accept|invitation_unavailable/i,
    homes: ["lib/organizations/invitations/", "app/t/[tenant]/invitation/", "db/schema/organization-invitations.ts"],
  },
  { name: "metrics", pattern: /metrics/i, homes: ["lib/metrics/"] },
  // The protocol frontier (issue 41): each one feature folder.
  { name: "pushed-authorization", pattern: /pushed[-_ ]?(authorization|request)|request_uri|\/oauth2\/par\b/i, homes: ["lib/oauth/pushed-authorization/", "app/t/[tenant]/oauth2/par/", "db/schema/pushed-authorization.ts"] },
  { name: "dpop", pattern: /dpop/i, homes: ["lib/oauth/dpop/", "db/schema/dpop.ts"] },
  // An organization's admin portal: one feature folder, a page and a console card.
  {
    name: "organization-admin-portal",
    pattern: /admin[-_ ]?portal|organization[-_]portal|organization-admin\b|portal_link/i,
    homes: ["lib/organizations/admin-portal/", "app/t/[tenant]/organization-admin/", "components/console/admin-portal/", "db/schema/organization-admin-portal.ts"],
  },
  { name: "scim", pattern: /scim/i, homes: ["lib/organizations/scim/", "app/t/[tenant]/scim/", "components/console/scim/", "db/schema/scim.ts"] },
  { name: "device-authorization", pattern: /device[-_ ]?(authorization|code|flow)|\/device\b/i, homes: ["lib/oauth/device-authorization/", "app/t/[tenant]/device/", "app/t/[tenant]/oauth2/device_authorization/", "db/schema/device-authorization.ts"] },
];

const SOURCE = /\.(ts|tsx|mts|cts|mjs|cjs)$/;
const NOT_SOURCE = /(\.test\.|^db\/migrations\/|^tests\/|^e2e\/|\.d\.ts$)/;

export function sourceFiles(root = process.cwd()) {
  const listed = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "lib", "app", "components", "db", "proxy.ts", "server.ts"], { cwd: root, encoding: "utf8" });
  return listed.split("\n").filter((f) => SOURCE.test(f) && !NOT_SOURCE.test(f));
}

/** The file's text without its comments. */
export function codeOf(text) {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.JSX, text);
  let out = "";
  // The brace depth at which each open template literal's `${` was met: its `}` resumes the template
  // (without this, a template's tail is read as code and the comments after it with it).
  const templates = [];
  let depth = 0;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.OpenBraceToken) depth++;
    else if (kind === ts.SyntaxKind.CloseBraceToken) {
      if (templates.length && templates.at(-1) === depth) kind = scanner.reScanTemplateToken(false);
      else depth--;
    }
    if (kind === ts.SyntaxKind.TemplateHead) templates.push(depth);
    else if (kind === ts.SyntaxKind.TemplateTail) templates.pop();
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) continue;
    out += scanner.getTokenText();
  }
  return out;
}

export function featureSpread(root = process.cwd()) {
  const files = sourceFiles(root).map((path) => {
    let text = "";
    try {
      text = readFileSync(`${root}/${path}`, "utf8");
    } catch {
      // listed but deleted in the work tree
    }
    return { path, text, code: codeOf(text) };
  });
  return FEATURE_SPREAD.map(({ name, pattern, homes }) => {
    const outside = files.filter((f) => !homes.some((h) => f.path.startsWith(h)));
    const inCode = outside.filter((f) => pattern.test(f.code)).map((f) => f.path);
    const withComments = outside.filter((f) => pattern.test(f.text)).length;
    return { name, homes, outside: inCode, count: inCode.length, withComments };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = featureSpread();
  if (process.argv.includes("--json")) console.log(JSON.stringify(result, null, 2));
  else
    for (const f of result) {
      console.log(`${f.name}: ${f.count} files outside ${f.homes.join(", ")} name it in code (${f.withComments} with comments)`);
      for (const p of f.outside) console.log(`  ${p}`);
    }
}
