/**
 * The one "client secret is active" rule: not revoked, and its expiry after `now`. The SQL form
 * serves every statement that takes a secret (client authentication, the client credentials grant,
 * introspection's caller, the console's revocation and expiry notices) over `client_secrets` or an
 * alias of it; `isActiveSecret` is its twin for a loaded row, and a test holds the two equal.
 * (The authority chain's credential link, ./chain.ts, is the same rule written null-safe for a
 * left-joined secret, with its own twin test over every dead link.)
 */
import { and, gt, isNull, type Column, type SQL, type SQLWrapper } from "drizzle-orm";

export function secretActiveSql(secret: { revokedAt: Column; expiresAt: Column }, now: SQLWrapper | Date): SQL {
  return and(isNull(secret.revokedAt), gt(secret.expiresAt, now))!;
}

export function isActiveSecret(row: { revokedAt: Date | null; expiresAt: Date }, now: Date): boolean {
  return row.revokedAt === null && row.expiresAt.getTime() > now.getTime();
}
