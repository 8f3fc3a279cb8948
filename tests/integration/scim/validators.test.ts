/**
 * The request sequences Microsoft Entra ID's and Okta's provisioning send, written down from their
 * public documentation as fixtures (./fixtures/entra.json, ./fixtures/okta.json), replayed in order
 * against an organization's directory: each step's status, the fields its answer must have (and
 * must not), ids captured from one answer and used in the next steps. Each runs on a directory of
 * its own, with the connection and subject its service uses.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME } from "../../helpers/fixtures";
import { createHarness, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { directoryWithToken, scimClient, seedScimWorkspace } from "./helpers";

interface Step {
  name: string;
  method: string;
  path: string;
  status: number;
  body?: unknown;
  capture?: string;
  expect?: Record<string, unknown>;
  absent?: string[];
}

const load = (name: string): Step[] => JSON.parse(readFileSync(path.join(import.meta.dirname, "fixtures", name), "utf8")).steps;

/** Replaces `$name` with the captured id, everywhere in a value. */
function fill<T>(value: T, captured: Map<string, string>): T {
  const text = JSON.stringify(value).replace(/\$([a-z]+)/g, (whole, name: string) => captured.get(name) ?? whole);
  return JSON.parse(text) as T;
}

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

for (const [service, file, subjectAttribute] of [
  ["Microsoft Entra ID", "entra.json", "externalId"],
  ["Okta", "okta.json", "userName"],
] as const) {
  describe(`${service}'s request sequence`, () => {
    const ws = uniqueWorkspaceId("scimv");
    const captured = new Map<string, string>();
    let client: ReturnType<typeof scimClient>;

    beforeAll(async () => {
      const ids = await seedScimWorkspace(h, ws);
      const { token } = await directoryWithToken(h, ws, ids.acme, { connectionId: ids.connection, subjectAttribute });
      client = scimClient(h, ws, ACME, token);
    });

    for (const step of load(file)) {
      it(step.name, async () => {
        const res = await client(step.method, fill(step.path, captured), step.body === undefined ? undefined : fill(step.body, captured));
        const text = await res.text();
        expect(res.status, text).toBe(step.status);
        if (res.status >= 400) expect(res.headers.get("content-type")).toContain("application/scim+json");
        const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        if (step.capture) captured.set(step.capture, body.id as string);
        if (step.expect) expect(body).toMatchObject(fill(step.expect, captured));
        for (const name of step.absent ?? []) expect(body[name], name).toBeUndefined();
      });
    }
  });
}
