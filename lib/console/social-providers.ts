/**
 * A workspace's social sign-in providers (Google, Microsoft, Apple, GitHub, or any OpenID Connect
 * provider): settings per preset, the client secret (Apple: the private key) stored AES-256-GCM
 * under the master key and never shown again, and the button order. Which applications offer
 * which provider is set on the application (lib/console/applications.ts).
 *
 * `config` holds the settings a preset allows, under the workspace file's names: issuer,
 * authorization_endpoint, token_endpoint, userinfo_endpoint, api_base, tenant, team_id, key_id.
 */
import { createPrivateKey } from "node:crypto";
import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import { SOCIAL_PRESETS, socialProviders, type SocialPreset } from "../../db/schema";
import { encryptSecret, newId } from "../crypto";
import type { Service } from "../service";
import { OPTIONAL_PROVIDER_FIELDS, PRESET_FIELDS, presetProblems, upstreamUrlProblem } from "../workspaces/document/social-providers";
import { checkbox, id, optionalText, text } from "./forms";
import { ConsoleInputError, defineOperation, fieldError, formError } from "./operation";

export const socialSecretPurpose = (providerId: string) => `social-provider:${providerId}`;

export const PRESET_LABELS: Record<SocialPreset, string> = {
  google: "Google",
  microsoft: "Microsoft",
  apple: "Apple",
  github: "GitHub",
  oidc: "OpenID Connect",
};

export type ProviderField = (typeof OPTIONAL_PROVIDER_FIELDS)[number];

/** Which settings each preset shows (the rest do not apply to it). */
export const presetFields = (preset: SocialPreset): readonly ProviderField[] => PRESET_FIELDS[preset] as readonly ProviderField[];

export interface SocialProviderInfo {
  id: string;
  key: string;
  preset: SocialPreset;
  name: string;
  enabled: boolean;
  position: number;
  clientId: string;
  config: Partial<Record<ProviderField, string>>;
  hasSecret: boolean;
  updatedAt: Date;
}

/** The workspace's providers in button order. */
export async function listSocialProviders(service: Service, workspaceId: string): Promise<SocialProviderInfo[]> {
  const rows = await service.db
    .select()
    .from(socialProviders)
    .where(eq(socialProviders.workspaceId, workspaceId))
    .orderBy(asc(socialProviders.position), asc(socialProviders.key));
  return rows.map((r) => ({
    id: r.id,
    key: r.key,
    preset: r.preset,
    name: r.name,
    enabled: r.enabled,
    position: r.position,
    clientId: r.clientId,
    config: Object.fromEntries(OPTIONAL_PROVIDER_FIELDS.flatMap((f) => (typeof r.config[f] === "string" ? [[f, r.config[f] as string]] : []))),
    hasSecret: r.secretEncrypted !== null,
    updatedAt: r.updatedAt,
  }));
}

const URL_FIELDS = ["issuer", "authorization_endpoint", "token_endpoint", "userinfo_endpoint", "api_base"] as const;

const providerSettings = {
  name: text("a button label", 100),
  client_id: text("the client id", 200),
  client_secret: optionalText(10_000),
  tenant: optionalText(253),
  team_id: optionalText(20),
  key_id: optionalText(20),
  issuer: optionalText(2000),
  authorization_endpoint: optionalText(2000),
  token_endpoint: optionalText(2000),
  userinfo_endpoint: optionalText(2000),
  api_base: optionalText(2000),
  enabled: checkbox(),
};

const settingsSchema = z.object(providerSettings);
type SettingsInput = z.output<typeof settingsSchema>;

/** The preset's rules over the form (the workspace file's), as messages per field; the config to store. */
function checkSettings(preset: SocialPreset, input: SettingsInput, secretRequired: boolean): Record<string, unknown> {
  const errors: Record<string, string> = {};
  for (const field of URL_FIELDS) {
    const value = input[field];
    const problem = value === undefined ? null : upstreamUrlProblem(value);
    if (problem) errors[field] = `This URL ${problem}`;
  }
  for (const field of ["team_id", "key_id"] as const) {
    if (input[field] !== undefined && !/^[A-Za-z0-9]{1,20}$/.test(input[field])) errors[field] = "Use letters and digits only";
  }
  const config = Object.fromEntries(OPTIONAL_PROVIDER_FIELDS.flatMap((f) => (input[f] !== undefined ? [[f, input[f]]] : [])));
  const subject: Record<string, string> = { issuer: "The issuer", tenant: "The tenant", team_id: "The team id", key_id: "The key id" };
  for (const [field, message] of presetProblems({ preset, ...config })) errors[field] ??= `${subject[field] ?? "This"} ${message}`;
  if (preset === "apple" && input.client_secret !== undefined) {
    try {
      createPrivateKey(input.client_secret);
    } catch {
      errors.client_secret = "Paste the private key (.p8 file) Apple gave you: -----BEGIN PRIVATE KEY----- …";
    }
  }
  if (secretRequired && input.client_secret === undefined) errors.client_secret = preset === "apple" ? "Paste the private key" : "Enter the client secret";
  if (Object.keys(errors).length) throw new ConsoleInputError(errors);
  return config;
}

export const createSocialProvider = defineOperation({
  name: "social_provider.created",
  role: "admin",
  input: z.object({
    preset: z.enum(SOCIAL_PRESETS, { error: "Choose a provider" }),
    key: z
      .string({ error: "Enter a key" })
      .trim()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "Use 1–63 characters of a–z, 0–9 and -, starting with a letter or digit"),
    ...providerSettings,
  }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const config = checkSettings(input.preset, input, true);
    const existing = await ctx.db.select({ key: socialProviders.key, position: socialProviders.position }).from(socialProviders).where(eq(socialProviders.workspaceId, wid));
    if (existing.some((p) => p.key === input.key)) throw fieldError("key", "A provider with this key already exists");
    const providerId = newId();
    const inserted = await ctx.db
      .insert(socialProviders)
      .values({
        id: providerId,
        workspaceId: wid,
        key: input.key,
        preset: input.preset,
        name: input.name,
        enabled: input.enabled,
        // New buttons go last.
        position: existing.reduce((max, p) => Math.max(max, p.position + 1), 0),
        clientId: input.client_id,
        secretEncrypted: input.client_secret === undefined ? null : encryptSecret(ctx.service.config.masterKey, input.client_secret, socialSecretPurpose(providerId)),
        config,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      .onConflictDoNothing()
      .returning({ id: socialProviders.id });
    if (inserted.length === 0) throw fieldError("key", "A provider with this key already exists");
    return {
      result: { id: providerId },
      audit: { target: input.key, data: { provider_id: providerId, preset: input.preset, name: input.name, client_id: input.client_id, enabled: input.enabled, config, secret_changed: input.client_secret !== undefined } },
    };
  },
});

/** Updates a provider's settings; an empty secret keeps the stored one. Key and preset stay. */
export const updateSocialProvider = defineOperation({
  name: "social_provider.updated",
  role: "admin",
  input: z.object({ provider_id: id("provider"), ...providerSettings }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [row] = await ctx.db
      .select()
      .from(socialProviders)
      .where(and(eq(socialProviders.workspaceId, wid), eq(socialProviders.id, input.provider_id)))
      .limit(1);
    if (!row) throw formError("This provider no longer exists");
    const config = checkSettings(row.preset, input, row.secretEncrypted === null && input.enabled);
    const secretEncrypted = input.client_secret === undefined ? undefined : encryptSecret(ctx.service.config.masterKey, input.client_secret, socialSecretPurpose(row.id));
    await ctx.db
      .update(socialProviders)
      .set({ name: input.name, clientId: input.client_id, enabled: input.enabled, config, ...(secretEncrypted ? { secretEncrypted } : {}), updatedAt: ctx.now })
      .where(and(eq(socialProviders.workspaceId, wid), eq(socialProviders.id, row.id)));
    return {
      result: null,
      audit: { target: row.key, data: { provider_id: row.id, name: input.name, client_id: input.client_id, enabled: input.enabled, config, secret_changed: !!secretEncrypted } },
    };
  },
});

/** Moves a provider's button one place up or down (positions renumbered 0…n-1 in the new order). */
export const moveSocialProvider = defineOperation({
  name: "social_provider.moved",
  role: "admin",
  input: z.object({ provider_id: id("provider"), direction: z.enum(["up", "down"], { error: "Choose up or down" }) }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const rows = await ctx.db
      .select({ id: socialProviders.id, key: socialProviders.key, position: socialProviders.position })
      .from(socialProviders)
      .where(eq(socialProviders.workspaceId, wid))
      .orderBy(asc(socialProviders.position), asc(socialProviders.key));
    const at = rows.findIndex((r) => r.id === input.provider_id);
    if (at < 0) throw formError("This provider no longer exists");
    const to = input.direction === "up" ? at - 1 : at + 1;
    if (to < 0 || to >= rows.length) return { result: null, audit: null };
    [rows[at], rows[to]] = [rows[to], rows[at]];
    for (const [position, row] of rows.entries()) {
      if (row.position === position) continue;
      await ctx.db.update(socialProviders).set({ position, updatedAt: ctx.now }).where(eq(socialProviders.id, row.id));
    }
    return { result: null, audit: { target: rows[to].key, data: { provider_id: input.provider_id, direction: input.direction, order: rows.map((r) => r.key) } } };
  },
});

/** Removes a provider: applications stop offering it; its users' links stay recorded, out of use. */
export const removeSocialProvider = defineOperation({
  name: "social_provider.removed",
  role: "admin",
  input: z.object({ provider_id: id("provider") }),
  async run(ctx, input) {
    const [removed] = await ctx.db
      .delete(socialProviders)
      .where(and(eq(socialProviders.workspaceId, ctx.access.workspace.id), eq(socialProviders.id, input.provider_id)))
      .returning({ key: socialProviders.key, preset: socialProviders.preset });
    if (!removed) throw formError("This provider no longer exists");
    return { result: null, audit: { target: removed.key, data: { provider_id: input.provider_id, preset: removed.preset } } };
  },
});
