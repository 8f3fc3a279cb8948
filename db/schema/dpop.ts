import { index, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { workspaces } from "./workspaces";

/**
 * DPoP proofs already accepted (RFC 9449 §11.1), by the hash of their key's thumbprint and `jti`:
 * the replay cache every instance shares. A proof is claimed by one insert (one winner however
 * many requests race) and its row is needed only while the proof's `iat` is within the accepted
 * window; then the purger deletes it (lib/oauth/dpop).
 */
export const dpopProofs = pgTable(
  "dpop_proofs",
  {
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    /** SHA-256 of the key's thumbprint and the proof's `jti`. */
    proofHash: text("proof_hash").notNull(),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.proofHash] }), index("dpop_proofs_expiry_idx").on(t.workspaceId, t.expiresAt)],
);
