/**
 * The connection protocols, once (./contract.ts): the console, the workspace file, the CLI and the
 * route table read this registry by a connection's `kind` and never name a protocol. A new
 * protocol is its folder and one line here (and its enterprise_connections.kind value).
 */
import type { Route } from "../../http/route";
import type { ConnectionAdmission } from "../providers";
import type { ConnectionKind, ConnectionProtocol, ProtocolRouteDeps } from "./contract";
import { OIDC } from "./oidc";
import { SAML } from "./saml";

export type { ConnectionKind, ConnectionProtocol, ConnectionRow, ConsoleFieldTypes, ConsolePrefill, FileFieldTypes, PreviousConnection } from "./contract";

export const CONNECTION_PROTOCOLS: Readonly<Record<ConnectionKind, ConnectionProtocol>> = { oidc: OIDC, saml: SAML };

/** The protocols' kinds, the first the default (the workspace file's `protocol` when absent). */
export const CONNECTION_KINDS = Object.keys(CONNECTION_PROTOCOLS) as [ConnectionKind, ...ConnectionKind[]];

/**
 * Whether a connection of this protocol may have this admission rule (who a first sign-in admits,
 * lib/federation/identities.ts); when not, why (for the console's and the workspace file's messages).
 */
export function admissionRefusal(kind: ConnectionKind, admission: ConnectionAdmission): string | null {
  const reason = CONNECTION_PROTOCOLS[kind].verifiedDomainsOnly;
  return reason && admission !== "verified_domains" ? reason : null;
}

/** Every protocol's own routes (lib/sign-in/steps/federation.ts adds them to the route table). */
export function connectionProtocolRoutes(deps: ProtocolRouteDeps): Route[] {
  return Object.values(CONNECTION_PROTOCOLS).flatMap((p) => p.routes?.(deps) ?? []);
}
