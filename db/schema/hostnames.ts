import { boolean, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { ts } from "./common";
import { workspaces } from "./workspaces";

/**
 * An authentication hostname of a workspace besides the installation's default host
 * (lib/hostnames): it serves the workspace's issuer once verified by a DNS TXT record. A verified
 * hostname belongs to one workspace; several workspaces may claim one before it is verified.
 */
export const workspaceHostnames = pgTable(
  "workspace_hostnames",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    /** Lower-case ASCII (punycode), no port, no trailing dot. */
    hostname: text("hostname").notNull(),
    /** The random value the TXT record must carry (not a secret: it is published in DNS). */
    verificationToken: text("verification_token").notNull(),
    verifiedAt: ts("verified_at"),
    /** `dns`: the TXT record was found; `operator`: the installation's operator vouched for it (a workspace file imported from the command line; audited). */
    verificationMethod: text("verification_method", { enum: ["dns", "operator"] }),
    /** The hostname the console shows as the workspace's issuer and links made outside a request use. */
    primary: boolean("primary").notNull().default(false),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("workspace_hostnames_workspace_hostname_uq").on(t.workspaceId, t.hostname),
    uniqueIndex("workspace_hostnames_verified_uq").on(t.hostname).where(sql`${t.verifiedAt} is not null`),
    uniqueIndex("workspace_hostnames_primary_uq").on(t.workspaceId).where(sql`${t.primary}`),
    index("workspace_hostnames_hostname_idx").on(t.hostname),
  ],
);
