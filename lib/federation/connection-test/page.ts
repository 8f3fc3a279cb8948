/**
 * The page a connection test ends on: the identity as a sign-in would use it, everything the
 * identity provider sent (the ID token's and UserInfo's claims, or the assertion's NameID and
 * attributes, as received), and whether a sign-in through the connection would be admitted, or the
 * condition that failed. Self-contained, with the hosted pages' look and
 * headers; every value escaped.
 */
import { hostedErrorPageCss } from "../../branding/css";
import { escapeHtml, HOSTED_PAGE_HEADERS } from "../../hosted/html";
import type { Admission } from "../identities";
import { CONNECTION_PROTOCOLS, type ConnectionKind } from "../protocols";
import type { ReceivedAttribute, UpstreamIdentity } from "../upstream/contract";

export interface ConnectionTestResult {
  connection: { name: string; kind: ConnectionKind; active: boolean };
  organization: string;
}

export type ConnectionTestOutcome = { identity: UpstreamIdentity; admission: Admission; refusal: string | null } | { failure: string };

export const CONNECTION_TEST_TITLE = "Connection test";

/** The attributes as the page lists them: label and value (null: not sent). */
export function attributesOf(identity: UpstreamIdentity): Array<[string, string | null]> {
  return [
    ["Subject", identity.subject],
    ["Issuer", identity.issuer],
    ["Email", identity.email],
    ["Email verified", identity.emailVerified ? "yes" : "no"],
    ["Name", identity.name],
    ["Authentication methods (amr)", identity.amr.length ? identity.amr.join(", ") : null],
    ["Authentication context (acr)", identity.acr],
  ];
}

/** What a sign-in through the connection would do with this identity, in a sentence. */
export function verdictOf(admission: Admission, refusal: string | null): { admitted: boolean; text: string } {
  switch (admission.kind) {
    case "known":
      return { admitted: true, text: "A sign-in would be admitted: this identity is already linked to an account through this connection, which it would sign in as." };
    case "link":
      return { admitted: true, text: "A sign-in would be admitted: an account with this address exists, and the user would first prove that account (its password, a passkey or an email code) before the identity is linked to it." };
    case "new":
      return { admitted: true, text: "A sign-in would be admitted: an account would be created for this address, joining the organization with the connection's default roles." };
    case "refused":
      return { admitted: false, text: `A sign-in would be refused. ${refusal ?? ""}`.trim() };
  }
}

/** What the identity provider sent, as a table: where each attribute came from, its name and its values. */
function receivedTable(received: ReceivedAttribute[]): string {
  if (received.length === 0) return "";
  const rows = received
    .map((a) => `<tr><td>${escapeHtml(a.source)}</td><th scope="row"><code>${escapeHtml(a.name)}</code></th><td>${a.values.map((v) => `<code>${escapeHtml(v)}</code>`).join("<br>")}</td></tr>`)
    .join("");
  return (
    `<h2>What the identity provider sent</h2>` +
    `<p>Every claim or attribute of its verified response, as received (the mapping above reads from these):</p>` +
    `<table data-received><thead><tr><th scope="col">From</th><th scope="col">Name</th><th scope="col">Values</th></tr></thead><tbody>${rows}</tbody></table>`
  );
}

function row(label: string, value: string | null): string {
  return `<tr><th scope="row">${escapeHtml(label)}</th><td>${value === null ? "<em>not sent</em>" : `<code>${escapeHtml(value)}</code>`}</td></tr>`;
}

export function connectionTestPage(result: ConnectionTestResult & ConnectionTestOutcome, back: string | null, headers: [string, string][] = []): Response {
  const protocol = CONNECTION_PROTOCOLS[result.connection.kind]?.label ?? result.connection.kind;
  const about = `<p>${escapeHtml(`${result.connection.name} (${protocol}), a connection of ${result.organization}.`)}</p>`;
  const disabled = result.connection.active ? "" : "<p>The connection is disabled: sign-ins through it are refused until it is enabled.</p>";
  let body: string;
  if ("failure" in result) {
    body = `<p><strong>The test failed.</strong></p><p>${escapeHtml(result.failure)}</p>`;
  } else {
    const verdict = verdictOf(result.admission, result.refusal);
    body =
      `<p><strong>The identity provider signed the user in and Latchkey verified its response.</strong> The identity a sign-in would use:</p>` +
      `<table><tbody>${attributesOf(result.identity).map(([label, value]) => row(label, value)).join("")}</tbody></table>` +
      `<p data-verdict="${verdict.admitted ? "admitted" : "refused"}"><strong>${escapeHtml(verdict.text)}</strong></p>` +
      receivedTable(result.identity.received ?? []);
  }
  const nothing = "<p>Nobody was signed in: the test creates no account, session or membership, and links no identity.</p>";
  const link = back ? `<p><a href="${escapeHtml(back)}">Back to the organization</a></p>` : "";
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${CONNECTION_TEST_TITLE} · Latchkey</title>
<style>
${hostedErrorPageCss()}
main{max-width:40rem}table{border-collapse:collapse;width:100%;margin:0 0 .75rem;font-size:.9rem}th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-top:1px solid #e2e8f0}th{font-weight:600;white-space:nowrap}td code,th code{word-break:break-all;white-space:normal}h2{font-size:1.05rem;margin:1.25rem 0 .5rem}
a{color:#4338ca;font-weight:600}@media (prefers-color-scheme: dark){a{color:#a5b4fc}}
</style></head>
<body><main><h1>${CONNECTION_TEST_TITLE}</h1>${about}${disabled}${body}${nothing}${link}</main></body></html>`;
  const answer = new Headers({ "Content-Type": "text/html; charset=utf-8", ...HOSTED_PAGE_HEADERS });
  for (const [name, value] of headers) answer.append(name, value);
  return new Response(html, { status: 200, headers: answer });
}
