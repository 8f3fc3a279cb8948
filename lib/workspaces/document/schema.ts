// The whole workspace document: its top-level schema, assembled from lib/workspaces' sections and the features' (lib/features/registry.ts), and the types derived from it.
import { z } from "zod";
import { WORKSPACE_SECTIONS, type FeatureDocumentShape } from "../../features/registry";
import { inSectionOrder } from "../../surfaces/workspace-file";
import { apiGrantSchema } from "./api-grants";
import { apiSchema } from "./apis";
import { applicationSchema } from "./applications";
import { authPolicySchema } from "./auth-policy";
import { brandingSchema } from "./branding";
import { displayName, workspaceId } from "./fields";
import { organizationSchema } from "./organizations";
import { roleSchema } from "./roles";
import { socialProviderSchema } from "./social-providers";
import { userSchema } from "./users";

/** lib/workspaces' own sections, each by name with its keys, in document order; a feature's section goes after the one it names. */
const OWN_SECTIONS = [
  [
    "workspace",
    {
      /** Lets editors validate the file; ignored by import. */
      $schema: z.string().optional(),
      id: workspaceId,
      name: displayName,
      /** The workspace's authentication policy: overrides of the defaults (lib/authn/policy.ts DEFAULT_POLICY). */
      auth_policy: authPolicySchema.optional(),
    },
  ],
  /** How the hosted pages look: display name, primary colour, theme and logo (lib/branding's rule). */
  ["branding", { branding: brandingSchema.optional() }],
  ["applications", { applications: z.array(applicationSchema).default([]) }],
  ["apis", { apis: z.array(apiSchema).default([]) }],
  ["api_grants", { api_grants: z.array(apiGrantSchema).default([]) }],
  ["roles", { roles: z.array(roleSchema).default([]) }],
  ["organizations", { organizations: z.array(organizationSchema).default([]) }],
  /** Social and generic OpenID Connect sign-in providers; the array order is the button order. */
  ["social_providers", { social_providers: z.array(socialProviderSchema).max(50, "must have at most 50 providers").default([]) }],
  ["users", { users: z.array(userSchema).default([]) }],
] as const;

type OwnShape = UnionToIntersection<(typeof OWN_SECTIONS)[number][1]>;
type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

const shape = Object.assign(
  {},
  ...inSectionOrder<z.ZodRawShape>(
    OWN_SECTIONS.map(([name, keys]) => [name, keys]),
    WORKSPACE_SECTIONS,
    (s) => s.shape,
  ),
) as OwnShape & FeatureDocumentShape;

export const workspaceDocumentSchema = z.strictObject(shape);

/** A validated document with defaults applied (what import writes and export returns). */
export type WorkspaceDocument = z.output<typeof workspaceDocumentSchema>;
/** What a file may say: optional fields may be left out. */
export type WorkspaceDocumentInput = z.input<typeof workspaceDocumentSchema>;
export type ApplicationEntry = WorkspaceDocument["applications"][number];
export type UserEntry = WorkspaceDocument["users"][number];
export type UserRoleRef = UserEntry["roles"][number];
export type OrganizationEntry = WorkspaceDocument["organizations"][number];
export type SocialProviderFileEntry = WorkspaceDocument["social_providers"][number];
