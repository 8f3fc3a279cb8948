/**
 * Starting a test of an enterprise connection: the connection must be one of this organization of
 * this workspace (an enabled or a disabled one: testing before enabling is the point; its
 * organization active). A round trip of purpose `test` goes upstream exactly as a sign-in's would,
 * bound to no sign-in but to a fresh secret that only the tester's browser holds, in an HttpOnly
 * cookie under the callback's path. Nothing else is written.
 */
import { and, eq } from "drizzle-orm";
import { enterpriseConnections, workspaces } from "../../../db/schema";
import { CodedError } from "../../coded-error";
import { randomToken, sha256Hex } from "../../crypto";
import { contextFor } from "../../http/context";
import type { Service } from "../../service";
import { loadConnection } from "../providers";
import { beginRoundTrip, CALLBACK_PATH, ROUND_TRIP_TTL_MS, type RoundTrip } from "../round-trip";
import { FederationError } from "../upstream/contract";

/** Who tests: a console operator, or an administrator of the organization in its portal. */
export type Tester = NonNullable<RoundTrip["tester"]>;
export type TesterKind = Tester["kind"];

/** The browser secret's cookie: one per test, so that two tests in two tabs do not overwrite each other. */
export const TEST_COOKIE_PREFIX = "lk_conntest_";
export const testCookieName = (roundTripId: string) => `${TEST_COOKIE_PREFIX}${roundTripId}`;

export type ConnectionTestErrorCode = "connection_not_found" | "connection_test_unavailable";

/** Why a test cannot start: the connection is not this organization's, or its settings cannot reach the upstream. */
export class ConnectionTestError extends CodedError<ConnectionTestErrorCode> {
  constructor(code: ConnectionTestErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, { status: code === "connection_not_found" ? 404 : 400, ...options });
    this.name = "ConnectionTestError";
  }
}

export interface ConnectionTestStart {
  /** The upstream's authorization URL (SAML: its SSO URL with the AuthnRequest): where to send the browser. */
  location: string;
  /** The browser-binding cookie to set (Secure, HttpOnly, SameSite=Lax) before sending the browser there. */
  cookie: { name: string; value: string; path: string; maxAge: number };
  /** The round trip's id (the cookie's name ends with it). */
  roundTripId: string;
}

export interface ConnectionTestRequest {
  workspaceId: string;
  organizationId: string;
  connectionId: string;
  tester: Tester;
}

/** Starts a test; throws ConnectionTestError. `service.db` may be a transaction (the console operation's). */
export async function beginConnectionTest(service: Service, input: ConnectionTestRequest): Promise<ConnectionTestStart> {
  const { workspaceId, organizationId, connectionId, tester } = input;
  if (!connectionId || connectionId.length > 64 || !organizationId || organizationId.length > 64) throw notFound();
  const [row] = await service.db
    .select({ workspaceName: workspaces.name })
    .from(enterpriseConnections)
    .innerJoin(workspaces, eq(workspaces.id, enterpriseConnections.workspaceId))
    .where(and(eq(enterpriseConnections.workspaceId, workspaceId), eq(enterpriseConnections.organizationId, organizationId), eq(enterpriseConnections.id, connectionId)))
    .limit(1);
  if (!row) throw notFound();
  // The default host: the callback the connection is registered with as the console shows it.
  const ctx = contextFor(service, { id: workspaceId, name: row.workspaceName });
  const secret = randomToken(32);
  let started: { url: URL; id: string };
  try {
    const loaded = await loadConnection(ctx, connectionId, { disabledToo: true });
    if (!loaded) throw new ConnectionTestError("connection_test_unavailable", "The organization is disabled: enable it to test its connections");
    started = await beginRoundTrip(ctx, { test: { tester, browserBindingHash: sha256Hex(secret) } }, loaded);
  } catch (error) {
    if (error instanceof FederationError) throw new ConnectionTestError("connection_test_unavailable", `The test could not start: ${error.message}`, { cause: error });
    throw error;
  }
  return {
    location: started.url.href,
    cookie: { name: testCookieName(started.id), value: secret, path: `${ctx.basePath}${CALLBACK_PATH}`, maxAge: ROUND_TRIP_TTL_MS / 1000 },
    roundTripId: started.id,
  };
}

function notFound(): ConnectionTestError {
  return new ConnectionTestError("connection_not_found", "This connection is not one of this organization's");
}
