/**
 * What a grant binds to the sender's key (RFC 9449 §5): every access token it issues, and the
 * refresh family of a public client (whose refresh tokens could otherwise be replayed by whoever
 * stole them); a confidential client's family stays unbound, its client authentication already
 * sender-constrains it. The family's key is fixed at the code exchange: a refresh must prove it,
 * and a refresh that proves no key or another is refused without spending the token.
 */
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { ClientRow } from "../clients";
import type { SenderKey } from "./sender";

/** The key a new family is bound to: the sender's, for a public client; null otherwise. */
export function familyKey(client: Pick<ClientRow, "type">, sender: SenderKey | null | undefined): string | null {
  return client.type === "PUBLIC" && sender ? sender.jkt : null;
}

/** The refresh rule in SQL: the family is bound and the request's key (text, null without a proof) is not its key. */
export function familyKeyRefusedSql(familyKeyColumn: SQLWrapper, senderJkt: SQLWrapper): SQL<boolean> {
  return sql<boolean>`(${familyKeyColumn} is not null and ${familyKeyColumn} is distinct from ${senderJkt})`;
}
