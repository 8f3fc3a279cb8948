// The whole workspace document: its top-level schema, assembled from the sections, and the types derived from it.
import { z } from "zod";
import { apiGrantSchema } from "./api-grants";
import { apiSchema } from "./apis";
import { applicationSchema } from "./applications";
import { authPolicySchema } from "./auth-policy";
import { brandingSchema } from "./branding";
import { displayName, workspaceId } from "./fields";
import { hostnamesSchema } from "./hostnames";
import { organizationSchema } from "./organizations";
import { roleSchema } from "./roles";
import { socialProviderSchema } from "./social-providers";
import { userSchema } from "./users";

export const workspaceDocumentSchema = z.strictObject({
  /** Lets editors validate the file; ignored by import. */
  $schema: z.string().optional(),
  id: workspaceId,
  name: displayName,
  /** The workspace's authentication policy: overrides of the defaults (lib/authn/policy.ts DEFAULT_POLICY). */
  auth_policy: authPolicySchema.optional(),
  /** How the hosted pages look: display name, primary colour, theme and logo (lib/branding's rule). */
  branding: brandingSchema.optional(),
  /** The workspace's own authentication hostnames besides the installation's host (docs/hostnames.md). */
  hostnames: hostnamesSchema,
  /** WebAuthn related origins across the workspace's hostnames: a passkey made at the primary hostname works at the others. Off by default. */
  webauthn_related_origins: z.boolean().default(false),
  applications: z.array(applicationSchema).default([]),
  apis: z.array(apiSchema).default([]),
  api_grants: z.array(apiGrantSchema).default([]),
  roles: z.array(roleSchema).default([]),
  organizations: z.array(organizationSchema).default([]),
  /** Social and generic OpenID Connect sign-in providers; the array order is the button order. */
  social_providers: z.array(socialProviderSchema).max(50, "must have at most 50 providers").default([]),
  users: z.array(userSchema).default([]),
});

/** A validated document with defaults applied (what import writes and export returns). */
export type WorkspaceDocument = z.output<typeof workspaceDocumentSchema>;
/** What a file may say: optional fields may be left out. */
export type WorkspaceDocumentInput = z.input<typeof workspaceDocumentSchema>;
export type ApplicationEntry = WorkspaceDocument["applications"][number];
export type UserEntry = WorkspaceDocument["users"][number];
export type UserRoleRef = UserEntry["roles"][number];
export type OrganizationEntry = WorkspaceDocument["organizations"][number];
export type SocialProviderFileEntry = WorkspaceDocument["social_providers"][number];
