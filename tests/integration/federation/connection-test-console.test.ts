/**
 * "Test the connection" in the console (lib/federation/connection-test/console.ts): an admin of the
 * workspace starts a test of one of an organization's connections, disabled ones included, and
 * receives where to send the browser and the cookie to set; a viewer is refused, and so is a
 * connection of another organization. The start is audited; the round trip records its tester.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, federationTransactions } from "../../../db/schema";
import { runOperation } from "../../../lib/console/operation";
import { ensureSystemWorkspace } from "../../../lib/console/system";
import { sha256Hex } from "../../../lib/crypto";
import { testConnection } from "../../../lib/federation/connection-test/console";
import { ACME, authzWorkspace, GLOBEX } from "../../helpers/fixtures";
import { seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { auditCatalogueMismatches } from "../../helpers/audit";
import { readAuthnRequest, samlIdpStandin } from "../../helpers/federation/saml-idp-standin";
import { addSamlConnection, organizationIdOf, setConnection } from "../../helpers/federation/setup";
import { consoleSignIn, createConsoleHarness, createOperator } from "../console-helpers";

let h: Harness;
const ws = uniqueWorkspaceId("conntestc");
const idp = samlIdpStandin();
let acme: string;
let globex: string;
let connectionId: string;
let admin: string;
let viewer: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, authzWorkspace(ws));
  acme = await organizationIdOf(h, ws, ACME);
  globex = await organizationIdOf(h, ws, GLOBEX);
  connectionId = (await addSamlConnection(h, ws, { organization: ACME, idp })).id;
  await setConnection(h, connectionId, { active: false });
  await ensureSystemWorkspace(h.service);
  await createOperator(h, "admin@conntest.test", { [ws]: "admin" });
  await createOperator(h, "viewer@conntest.test", { [ws]: "viewer" });
  admin = (await consoleSignIn(h, "admin@conntest.test")).token;
  viewer = (await consoleSignIn(h, "viewer@conntest.test")).token;
});

describe("the console's connection test", () => {
  it("starts a test of a disabled connection for an admin: the identity provider's URL and the browser's cookie; the round trip records the tester", async () => {
    const outcome = await runOperation(h.service, admin, ws, testConnection, { organization_id: acme, connection_id: connectionId });
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    const { location, cookie } = outcome.result;
    expect(location.startsWith(idp.ssoUrl)).toBe(true);
    expect(cookie).toMatchObject({ path: `/t/${ws}/federation/callback`, maxAge: 600 });
    const relayState = readAuthnRequest(new URL(location)).relayState!;
    const [trip] = await h.service.db.select().from(federationTransactions).where(and(eq(federationTransactions.workspaceId, ws), eq(federationTransactions.stateHash, sha256Hex(relayState))));
    expect(trip).toMatchObject({ purpose: "test", transactionId: null, connectionId, browserBindingHash: sha256Hex(cookie.value), tester: { kind: "operator", email: "admin@conntest.test" } });
    expect(cookie.name).toBe(`lk_conntest_${trip!.id}`);
    const [event] = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "console.organization.connection_test_started")));
    expect(event).toMatchObject({ subject: connectionId, data: expect.objectContaining({ organization_id: acme, connection_id: connectionId }) });
    expect(auditCatalogueMismatches(event!)).toEqual([]);
  });

  it("refuses a viewer, and a connection of another organization", async () => {
    await expect(runOperation(h.service, viewer, ws, testConnection, { organization_id: acme, connection_id: connectionId })).rejects.toThrow();
    expect(await runOperation(h.service, admin, ws, testConnection, { organization_id: globex, connection_id: connectionId })).toMatchObject({
      ok: false,
      formError: "This connection is not one of this organization's",
    });
  });
});
