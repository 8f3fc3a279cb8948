import { boolean, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { ts } from "./common";

export const workspaces = pgTable("workspaces", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** The reserved operator workspace of the console. */
  system: boolean("system").notNull().default(false),
  /** The workspace's authentication policy (lib/authn/policy.ts reads it back through its own check). */
  authPolicy: jsonb("auth_policy").$type<Record<string, unknown>>().notNull().default({}),
  /** How the hosted pages look (display name, primary colour, theme); lib/branding reads it back through its own check. */
  branding: jsonb("branding").$type<Record<string, unknown>>().notNull().default({}),
  /**
   * WebAuthn related origins (lib/hostnames): each of the workspace's hostnames serves
   * `/.well-known/webauthn` listing the others, so a passkey enrolled on one is usable on another.
   */
  relatedOrigins: boolean("related_origins").notNull().default(false),
  createdAt: ts("created_at").notNull(),
  updatedAt: ts("updated_at").notNull(),
});

/** The workspace's logo for the hosted pages, served from its own issuer (hosted pages load nothing from third parties). */
export const workspaceLogos = pgTable("workspace_logos", {
  workspaceId: text("workspace_id")
    .primaryKey()
    .references(() => workspaces.id, { onDelete: "cascade" }),
  contentType: text("content_type").notNull(),
  /** The image, base64. */
  data: text("data").notNull(),
  /** SHA-256 of the image (hex): the ETag and the cache-busting part of its address. */
  digest: text("digest").notNull(),
  updatedAt: ts("updated_at").notNull(),
});
