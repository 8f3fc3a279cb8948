/**
 * The grant types the token endpoint accepts, one handler each: the token endpoint dispatches on
 * this table and discovery's `grant_types_supported` lists it. A new grant type is one file in
 * this folder and one entry here (docs/architecture.md, "Adding a grant type").
 */
import { authorizationCodeGrant } from "./authorization-code";
import { clientCredentialsGrant } from "./client-credentials";
import { deviceCodeGrant } from "../device-authorization/grant";
import { refreshTokenGrant } from "./refresh-token";
import type { GrantHandler } from "./types";

export const GRANTS: ReadonlyMap<string, GrantHandler> = new Map([authorizationCodeGrant, refreshTokenGrant, clientCredentialsGrant, deviceCodeGrant].map((g) => [g.grantType, g]));
