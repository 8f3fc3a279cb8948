/**
 * Applications (OAuth clients) and their secrets. URI rules are the workspace file's
 * (lib/uris.ts): exact URIs, https except loopback, no fragments; custom schemes only
 * for public native clients; allowed origins only for public clients.
 */
import { and, asc, count, desc, eq, gt, inArray, isNull } from "drizzle-orm";
import { secretActiveSql } from "../authority";
import { z } from "zod";
import { accessTokens, clientSocialProviders, clients, clientSecrets, grants, socialProviders } from "../../db/schema";
import type { ClientType } from "../../db/schema/applications";
import { removeApiGrant, setApiGrant } from "../authz/model";
import {
  createClientSecret,
  DEFAULT_SECRET_LIFETIME_DAYS,
  listClientSecrets,
  MAX_ROTATION_OVERLAP_HOURS,
  MAX_SECRET_LIFETIME_DAYS,
  revokeClientSecret,
  rotateClientSecret,
  type ClientSecretInfo,
} from "../clients/secrets";
import { newId } from "../crypto";
import type { Service } from "../service";
import { IDENTITY_SCOPES } from "../workspaces/document";
import { homeUriProblem, originProblem, redirectUriProblem } from "../uris";
import type { WorkspaceAccess } from "./authz";
import { checkbox, checked, id, integer, lines, optionalText, text } from "./forms";
import { confirmField, requireConfirmation } from "./confirmation";
import { ConsoleInputError, defineOperation, fieldError, formError } from "./operation";
import { hasRedirectUris } from "./redirect-uris-field";
import { APPLICATION_OPTIONS } from "../features/registry";
import type { ApplicationOption } from "../surfaces/application-options";

export type ApplicationRow = typeof clients.$inferSelect;

/** The kinds offered when creating: three public presets, confidential web, M2M. */
export const applicationKinds = {
  spa: { type: "PUBLIC", label: "Single-page app (public)" },
  public_web: { type: "PUBLIC", label: "Public web app" },
  native: { type: "PUBLIC", label: "Native or mobile app (public)" },
  web_confidential: { type: "WEB_CONFIDENTIAL", label: "Server web app (confidential)" },
  m2m: { type: "M2M", label: "Machine-to-machine" },
} as const satisfies Record<string, { type: ClientType; label: string }>;
export type ApplicationKind = keyof typeof applicationKinds;

/** How lists name each type of application. */
export const typeLabels: Record<ClientType, string> = {
  PUBLIC: "Single-page / native (public)",
  WEB_CONFIDENTIAL: "Web app (confidential)",
  M2M: "Machine to machine",
};

/** Applications that sign users in need somewhere to send them back. */
export const isInteractive = (type: ClientType) => type !== "M2M";

export async function listApplications(service: Service, workspaceId: string): Promise<ApplicationRow[]> {
  return service.db.select().from(clients).where(eq(clients.workspaceId, workspaceId)).orderBy(asc(clients.clientId));
}

/** The application page's tabs (`?tab=`; none is Connect), in the order the page lists them. */
export const APPLICATION_TABS = ["connect", "settings", "secrets", "sign-in", "api-access", "portal", "danger-zone"] as const;
export type ApplicationTab = (typeof APPLICATION_TABS)[number];

/** A link to an application's page, at one of its tabs. */
export function applicationHref(workspaceId: string, clientId: string, tab: ApplicationTab = "connect"): string {
  const path = `/console/w/${workspaceId}/applications/${encodeURIComponent(clientId)}`;
  return tab === "connect" ? path : `${path}?tab=${tab}`;
}

export async function getApplication(service: Service, workspaceId: string, clientId: string): Promise<ApplicationRow | null> {
  const [row] = await service.db
    .select()
    .from(clients)
    .where(and(eq(clients.workspaceId, workspaceId), eq(clients.clientId, clientId)))
    .limit(1);
  return row ?? null;
}

export async function applicationSecrets(service: Service, access: WorkspaceAccess, clientId: string): Promise<ClientSecretInfo[]> {
  return listClientSecrets(service.db, { workspaceId: access.workspace.id, clientId, clock: service.clock });
}

const clientIdField = z
  .string({ error: "Enter a client id" })
  .trim()
  .regex(/^[A-Za-z0-9._~-]{1,128}$/, "Use 1–128 characters of A–Z, a–z, 0–9 and . _ ~ -");

interface UriSettings {
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  home_uri?: string;
  allowed_origins: string[];
  identity_scopes: string[];
  account_security: boolean;
}

/** SPEC.md's registration rules per client type; every problem is reported beside its field. */
function checkSettings(type: ClientType, s: UriSettings): void {
  const errors: Record<string, string> = {};
  for (const field of ["redirect_uris", "post_logout_redirect_uris"] as const) {
    const list = s[field];
    if (!hasRedirectUris(type)) {
      if (list.length > 0) errors[field] = "Machine-to-machine applications have no redirect URIs";
      continue;
    }
    if (field === "redirect_uris" && list.length === 0) {
      errors[field] = "Enter at least one redirect URI: the application signs users in and gets them back there";
      continue;
    }
    const seen = new Set<string>();
    for (const uri of list) {
      const problem = redirectUriProblem(uri, type === "PUBLIC");
      if (problem) {
        errors[field] = `${uri} ${problem}`;
        break;
      }
      if (seen.has(uri)) {
        errors[field] = `${uri} is listed twice`;
        break;
      }
      seen.add(uri);
    }
  }
  if (type !== "PUBLIC" && s.allowed_origins.length > 0) {
    errors.allowed_origins = "Only public applications call from a browser; confidential ones have no allowed origins";
  } else {
    const seen = new Set<string>();
    for (const origin of s.allowed_origins) {
      const problem = originProblem(origin);
      if (problem) {
        errors.allowed_origins = `${origin} ${problem}`;
        break;
      }
      if (seen.has(origin)) {
        errors.allowed_origins = `${origin} is listed twice`;
        break;
      }
      seen.add(origin);
    }
  }
  const known = new Set<string>(IDENTITY_SCOPES);
  const unknown = s.identity_scopes.find((x) => !known.has(x));
  if (unknown) errors.identity_scopes = `${unknown} is not an identity scope`;
  else if (type === "M2M" && s.identity_scopes.length > 0) errors.identity_scopes = "Machine-to-machine applications have no identity scopes";
  else if (type !== "M2M" && !s.identity_scopes.includes("openid")) errors.identity_scopes = "Interactive applications need openid";
  if (type === "M2M" && s.account_security) errors.account_security = "Machine-to-machine applications cannot offer account security";
  if (s.home_uri !== undefined) {
    const problem = homeUriProblem(s.home_uri, type, s.redirect_uris[0]);
    if (problem) errors.home_uri = `${s.home_uri} ${problem}`;
  }
  if (Object.keys(errors).length > 0) throw new ConsoleInputError(errors);
}

const settingsFields = {
  redirect_uris: lines(100, "URIs"),
  post_logout_redirect_uris: lines(100, "URIs"),
  /** Where the account-security portal's way back goes; empty: the origin of the first redirect URI. */
  home_uri: optionalText(2000),
  allowed_origins: lines(100, "origins"),
  identity_scopes: checked(),
  account_security: checkbox(),
};

export const createApplication = defineOperation({
  name: "application.created",
  role: "admin",
  input: z.object({
    client_id: clientIdField,
    name: text("a name"),
    kind: z.enum(Object.keys(applicationKinds) as [ApplicationKind, ...ApplicationKind[]], { error: "Choose a kind of application" }),
    lifetime_days: integer("the secret lifetime", 1, MAX_SECRET_LIFETIME_DAYS).default(DEFAULT_SECRET_LIFETIME_DAYS),
    ...settingsFields,
  }),
  async run(ctx, input) {
    const type = applicationKinds[input.kind].type;
    const identityScopes = type === "M2M" ? [] : input.identity_scopes.length ? input.identity_scopes : ["openid"];
    checkSettings(type, { ...input, identity_scopes: identityScopes });
    const wid = ctx.access.workspace.id;
    const inserted = await ctx.db
      .insert(clients)
      .values({
        id: newId(),
        workspaceId: wid,
        clientId: input.client_id,
        name: input.name,
        type,
        active: true,
        redirectUris: input.redirect_uris,
        postLogoutRedirectUris: input.post_logout_redirect_uris,
        homeUri: input.home_uri ?? null,
        allowedOrigins: input.allowed_origins,
        identityScopes,
        accountSecurity: input.account_security,
        // Public applications have no secret, so the lifetime a no-JavaScript form still posts is not theirs.
        secretLifetimeDays: type === "PUBLIC" ? DEFAULT_SECRET_LIFETIME_DAYS : input.lifetime_days,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      .onConflictDoNothing()
      .returning({ id: clients.id });
    if (inserted.length === 0) throw fieldError("client_id", "An application with this client id already exists");
    let secret: { id: string; secret: string; expiresAt: Date } | null = null;
    if (type !== "PUBLIC") {
      secret = await createClientSecret(ctx.db, { workspaceId: wid, clientId: input.client_id, clock: ctx.service.clock, actor: ctx.access.operator.userId });
    }
    return {
      result: { clientId: input.client_id, type, secret },
      audit: { target: input.client_id, clientId: input.client_id, data: { type, kind: input.kind, redirect_uris: input.redirect_uris } },
    };
  },
});

export const updateApplication = defineOperation({
  name: "application.updated",
  role: "admin",
  input: z.object({ client_id: id("client id"), name: text("a name"), ...settingsFields }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [client] = await ctx.db.select().from(clients).where(and(eq(clients.workspaceId, wid), eq(clients.clientId, input.client_id))).for("update");
    if (!client) throw formError("This application no longer exists");
    checkSettings(client.type, input);
    const changes = {
      name: input.name,
      redirectUris: input.redirect_uris,
      postLogoutRedirectUris: input.post_logout_redirect_uris,
      homeUri: input.home_uri ?? null,
      allowedOrigins: input.allowed_origins,
      identityScopes: input.identity_scopes,
      accountSecurity: input.account_security,
    };
    await ctx.db.update(clients).set({ ...changes, updatedAt: ctx.now }).where(eq(clients.id, client.id));
    const before = {
      name: client.name,
      redirectUris: client.redirectUris,
      postLogoutRedirectUris: client.postLogoutRedirectUris,
      homeUri: client.homeUri,
      allowedOrigins: client.allowedOrigins,
      identityScopes: client.identityScopes,
      accountSecurity: client.accountSecurity,
    };
    const changed = Object.keys(changes).filter((k) => JSON.stringify(before[k as keyof typeof before]) !== JSON.stringify(changes[k as keyof typeof changes]));
    return { result: { changed }, audit: { target: input.client_id, clientId: input.client_id, data: { changed, ...changes } } };
  },
});

export const setApplicationActive = defineOperation({
  name: "application.status_changed",
  role: "admin",
  input: z.object({ client_id: id("client id"), active: z.enum(["true", "false"]).transform((v) => v === "true") }),
  async run(ctx, input) {
    const updated = await ctx.db
      .update(clients)
      .set({ active: input.active, updatedAt: ctx.now })
      .where(and(eq(clients.workspaceId, ctx.access.workspace.id), eq(clients.clientId, input.client_id)))
      .returning({ id: clients.id });
    if (updated.length === 0) throw formError("This application no longer exists");
    // Every token of the client checks `clients.active` on use, so disabling ends them at once.
    return { result: { active: input.active }, audit: { target: input.client_id, clientId: input.client_id, data: { active: input.active } } };
  },
});

/** The application options (lib/surfaces/application-options.ts) an application of `type` can switch on, in the registry's order. */
export const applicationOptionsFor = (type: ClientType): ApplicationOption[] => APPLICATION_OPTIONS.filter((o) => o.types.includes(type));

/**
 * Switches the application's protocol options: the checked ones on, every other one its type can
 * have off. The features declare them; this operation and the Protocol card never name one.
 */
export const setApplicationOptions = defineOperation({
  name: "application.options_changed",
  role: "admin",
  input: z.object({ client_id: id("client id"), options: checked() }),
  async run(ctx, input) {
    const [client] = await ctx.db
      .select()
      .from(clients)
      .where(and(eq(clients.workspaceId, ctx.access.workspace.id), eq(clients.clientId, input.client_id)))
      .for("update");
    if (!client) throw formError("This application no longer exists");
    const offered = applicationOptionsFor(client.type);
    for (const key of input.options) {
      if (!offered.some((o) => o.key === key)) throw fieldError("options", `This application cannot switch on ${key}`);
    }
    const options = Object.fromEntries(offered.filter((o) => input.options.includes(o.key)).map((o) => [o.key, true]));
    const changed = offered.map((o) => o.key).filter((key) => (client.options[key] === true) !== (options[key] === true));
    if (changed.length > 0) await ctx.db.update(clients).set({ options, updatedAt: ctx.now }).where(eq(clients.id, client.id));
    return { result: { changed }, audit: { target: input.client_id, clientId: input.client_id, data: { changed, on: Object.keys(options) } } };
  },
});

/** What deleting an application ends, counted for its confirmation and its audit event. */
export async function applicationFootprint(db: Service["db"], workspaceId: string, clientPk: string, now: Date): Promise<{ grants: number; accessTokens: number }> {
  const [g] = await db.select({ n: count() }).from(grants).where(and(eq(grants.workspaceId, workspaceId), eq(grants.clientPk, clientPk), isNull(grants.revokedAt)));
  const [t] = await db
    .select({ n: count() })
    .from(accessTokens)
    .where(and(eq(accessTokens.workspaceId, workspaceId), eq(accessTokens.clientPk, clientPk), isNull(accessTokens.revokedAt), gt(accessTokens.expiresAt, now)));
  return { grants: Number(g?.n ?? 0), accessTokens: Number(t?.n ?? 0) };
}

/**
 * Deletes an application for good: its secrets, API grants, user grants (so their refresh
 * tokens) and authorization codes go by foreign-key cascade; access tokens, which have no foreign
 * keys, are deleted here. Users' hosted sessions stay (they are the browser's, not the
 * application's). The operator confirms by typing the client id.
 */
export const deleteApplication = defineOperation({
  name: "application.deleted",
  role: "admin",
  input: z.object({ client_id: id("client id"), confirm: confirmField() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    requireConfirmation(input.confirm, input.client_id, "the client id");
    const [client] = await ctx.db.select().from(clients).where(and(eq(clients.workspaceId, wid), eq(clients.clientId, input.client_id))).for("update");
    if (!client) throw formError("This application no longer exists");
    const ended = await applicationFootprint(ctx.db, wid, client.id, ctx.now);
    await ctx.db.delete(accessTokens).where(and(eq(accessTokens.workspaceId, wid), eq(accessTokens.clientPk, client.id)));
    await ctx.db.delete(clients).where(eq(clients.id, client.id));
    return {
      result: { deleted: input.client_id },
      audit: { target: input.client_id, clientId: input.client_id, data: { name: client.name, type: client.type, grants_ended: ended.grants, access_tokens_ended: ended.accessTokens } },
    };
  },
});

export const createSecret = defineOperation({
  name: "application.secret_created",
  role: "admin",
  input: z.object({ client_id: id("client id"), lifetime_days: integer("the lifetime", 1, MAX_SECRET_LIFETIME_DAYS).default(DEFAULT_SECRET_LIFETIME_DAYS) }),
  async run(ctx, input) {
    const created = await createClientSecret(ctx.db, {
      workspaceId: ctx.access.workspace.id,
      clientId: input.client_id,
      clock: ctx.service.clock,
      actor: ctx.access.operator.userId,
      lifetimeDays: input.lifetime_days,
    });
    return { result: created, audit: { target: input.client_id, clientId: input.client_id, data: { secret_id: created.id, lifetime_days: input.lifetime_days } } };
  },
});

export const rotateSecret = defineOperation({
  name: "application.secret_rotated",
  role: "admin",
  input: z.object({
    client_id: id("client id"),
    overlap_hours: integer("the overlap", 0, MAX_ROTATION_OVERLAP_HOURS),
    lifetime_days: integer("the lifetime", 1, MAX_SECRET_LIFETIME_DAYS).default(DEFAULT_SECRET_LIFETIME_DAYS),
  }),
  async run(ctx, input) {
    const rotated = await rotateClientSecret(ctx.db, {
      workspaceId: ctx.access.workspace.id,
      clientId: input.client_id,
      clock: ctx.service.clock,
      actor: ctx.access.operator.userId,
      overlapHours: input.overlap_hours,
      lifetimeDays: input.lifetime_days,
    });
    return {
      result: { id: rotated.id, secret: rotated.secret, expiresAt: rotated.expiresAt },
      audit: { target: input.client_id, clientId: input.client_id, data: { secret_id: rotated.id, overlap_hours: input.overlap_hours, previous: rotated.previous.map((p) => p.id) } },
    };
  },
});

export const revokeSecret = defineOperation({
  name: "application.secret_revoked",
  role: "admin",
  input: z.object({ client_id: id("client id"), secret_id: id("secret") }),
  async run(ctx, input) {
    await revokeClientSecret(ctx.db, {
      workspaceId: ctx.access.workspace.id,
      clientId: input.client_id,
      secretId: input.secret_id,
      clock: ctx.service.clock,
      actor: ctx.access.operator.userId,
    });
    return { result: null, audit: { target: input.client_id, clientId: input.client_id, data: { secret_id: input.secret_id } } };
  },
});

/**
 * Ends a rotation overlap early: the secret expires now (expiry, not revocation, so human
 * authorizations obtained with it keep working through the new secret, as SPEC.md says).
 */
export const expireSecretNow = defineOperation({
  name: "application.secret_expired",
  role: "admin",
  input: z.object({ client_id: id("client id"), secret_id: id("secret") }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [client] = await ctx.db.select().from(clients).where(and(eq(clients.workspaceId, wid), eq(clients.clientId, input.client_id))).for("update");
    if (!client) throw formError("This application no longer exists");
    const updated = await ctx.db
      .update(clientSecrets)
      .set({ expiresAt: ctx.now })
      .where(
        and(
          eq(clientSecrets.workspaceId, wid),
          eq(clientSecrets.clientPk, client.id),
          eq(clientSecrets.id, input.secret_id),
          secretActiveSql(clientSecrets, ctx.now),
        ),
      )
      .returning({ id: clientSecrets.id });
    if (updated.length === 0) throw formError("This secret is not active");
    return { result: null, audit: { target: input.client_id, clientId: input.client_id, data: { secret_id: input.secret_id } } };
  },
});

/** Grants an API to the application with exactly the chosen permissions, or withdraws the grant. */
export const setClientApiGrant = defineOperation({
  name: "application.api_grant_set",
  role: "admin",
  input: z.object({ client_id: id("client id"), audience: id("API"), granted: checkbox(), permissions: checked() }),
  async run(ctx, input) {
    const change = { workspaceId: ctx.access.workspace.id, clock: ctx.service.clock, actor: ctx.access.operator.userId };
    if (!input.granted) {
      if (input.permissions.length > 0) throw fieldError("granted", "Grant the API to give permissions");
      await removeApiGrant(ctx.db, { ...change, clientId: input.client_id, audience: input.audience });
    } else {
      await setApiGrant(ctx.db, { ...change, clientId: input.client_id, audience: input.audience, permissions: input.permissions });
    }
    return {
      result: null,
      audit: { target: input.client_id, clientId: input.client_id, data: { audience: input.audience, granted: input.granted, permissions: input.permissions } },
    };
  },
});


/** The ids of the social providers the application offers on its sign-in page. */
export async function applicationSocialProviderIds(service: Service, workspaceId: string, clientPk: string): Promise<string[]> {
  const rows = await service.db
    .select({ providerId: clientSocialProviders.providerId })
    .from(clientSocialProviders)
    .where(and(eq(clientSocialProviders.workspaceId, workspaceId), eq(clientSocialProviders.clientPk, clientPk)));
  return rows.map((r) => r.providerId);
}

/** Which of the workspace's social providers the application offers: exactly the checked ones. */
export const setApplicationSocialProviders = defineOperation({
  name: "application.social_providers_set",
  role: "admin",
  input: z.object({ client_id: id("client id"), provider_ids: checked() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [client] = await ctx.db
      .select({ id: clients.id, type: clients.type })
      .from(clients)
      .where(and(eq(clients.workspaceId, wid), eq(clients.clientId, input.client_id)))
      .limit(1);
    if (!client) throw formError("This application no longer exists");
    const wanted = [...new Set(input.provider_ids)];
    if (client.type === "M2M" && wanted.length > 0) throw formError("A machine-to-machine application has no sign-in page");
    const providers = wanted.length
      ? await ctx.db
          .select({ id: socialProviders.id, key: socialProviders.key })
          .from(socialProviders)
          .where(and(eq(socialProviders.workspaceId, wid), inArray(socialProviders.id, wanted)))
      : [];
    if (providers.length !== wanted.length) throw fieldError("provider_ids", "A chosen provider no longer exists: reload the page");
    const current = await ctx.db
      .select({ providerId: clientSocialProviders.providerId })
      .from(clientSocialProviders)
      .where(and(eq(clientSocialProviders.workspaceId, wid), eq(clientSocialProviders.clientPk, client.id)));
    const currentIds = new Set(current.map((c) => c.providerId));
    const removed = [...currentIds].filter((pid) => !wanted.includes(pid));
    const added = wanted.filter((pid) => !currentIds.has(pid));
    if (removed.length === 0 && added.length === 0) return { result: null, audit: null };
    if (removed.length) {
      await ctx.db
        .delete(clientSocialProviders)
        .where(and(eq(clientSocialProviders.workspaceId, wid), eq(clientSocialProviders.clientPk, client.id), inArray(clientSocialProviders.providerId, removed)));
    }
    if (added.length) await ctx.db.insert(clientSocialProviders).values(added.map((providerId) => ({ workspaceId: wid, clientPk: client.id, providerId })));
    return {
      result: null,
      audit: { target: input.client_id, clientId: input.client_id, data: { providers: providers.map((p) => p.key).sort(), added, removed } },
    };
  },
});
