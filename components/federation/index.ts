/**
 * Each connection protocol's parts of the console's organization page, keyed by kind
 * (lib/federation/protocols `ConnectionKind`: the type check fails until a new protocol has its
 * entry). The page renders every protocol's parts through this map and never names one.
 */
import type { ConnectionKind } from "@/lib/federation/protocols";
import { OIDC_PARTS } from "./oidc";
import { SAML_PARTS } from "./saml";
import type { ConnectionParts } from "./types";

export type { ConnectionParts, ConnectionView } from "./types";

export const CONNECTION_PARTS: Readonly<Record<ConnectionKind, ConnectionParts>> = { oidc: OIDC_PARTS, saml: SAML_PARTS };
