/**
 * The workspace's authentication hostnames in the console (run by lib/console's `runOperation`): add one, verify it by its DNS TXT
 * record, make it primary (or the default host again), remove it, and turn WebAuthn related
 * origins on or off. The rules are ./hostnames.ts'; these operations add who may do it, the form
 * errors and the audit event. A workspace administrator verifies by DNS only: a verified hostname
 * is the workspace's alone across the installation, so the operator's word is not offered here
 * (only the installation's operator gives it, from the command line).
 */
import { and, count, eq, isNotNull, not } from "drizzle-orm";
import { z } from "zod";
import { grants, hostedSessions } from "../../db/schema";
import { chains, deadLinkSql, grantSource, nowValue, sessionSource } from "../authority";
import { lookupVerificationRecords, proofDns } from "../federation/dns-proof";
import { issuerFor } from "../http/context";
import type { Service } from "../service";
import { checkbox, confirmField, id, optionalText, requireConfirmation, text } from "../forms/fields";
import { defineOperation, fieldError, formError } from "../surfaces/operation";
import {
  addHostname as addHostnameRow,
  applyHostnameVerification,
  getHostname,
  HostnameError,
  makePrimaryHostname as makePrimaryHostnameRow,
  primaryHostname,
  primaryIssuer,
  removeHostname as removeHostnameRow,
  setRelatedOrigins as setRelatedOriginsRow,
  verifiedHostnames,
} from "./hostnames";

/** A rule of lib/hostnames as the form shows it: beside the hostname field on the add form, for the whole form elsewhere. */
function hostnameInputError(field?: "hostname") {
  return (error: unknown): never => {
    if (error instanceof HostnameError) {
      const besideField = field && (error.code === "invalid" || error.code === "taken" || error.code === "already_added");
      throw besideField ? fieldError(field, error.message) : formError(error.message);
    }
    throw error;
  };
}

/**
 * The issuer the console shows for the workspace (at its primary hostname, else at the default
 * host) and the others it also answers as (the default host and every other verified hostname).
 */
export async function workspaceIssuers(service: Service, workspaceId: string): Promise<{ primary: string; others: string[] }> {
  const publicUrl = service.config.publicUrl;
  const [primary, verified] = await Promise.all([primaryIssuer(service.db, publicUrl, workspaceId), verifiedHostnames(service.db, workspaceId)]);
  const others = [null, ...verified].map((h) => issuerFor(publicUrl, workspaceId, h)).filter((i) => i !== primary);
  return { primary, others };
}

/** What removing each hostname would end: its live hosted sessions and the live grants made under its issuer. */
export async function hostnameFootprints(service: Service, workspaceId: string): Promise<Map<string, { activeSessions: number; activeGrants: number }>> {
  const now = nowValue(service.clock.now());
  const [sessions, grantRows] = await Promise.all([
    service.db
      .select({ hostname: hostedSessions.hostname, n: count() })
      .from(hostedSessions)
      .where(and(eq(hostedSessions.workspaceId, workspaceId), isNotNull(hostedSessions.hostname), not(deadLinkSql("session", chains.sessionRecord, sessionSource, now))))
      .groupBy(hostedSessions.hostname),
    service.db
      .select({ hostname: grants.hostname, n: count() })
      .from(grants)
      .where(and(eq(grants.workspaceId, workspaceId), isNotNull(grants.hostname), not(deadLinkSql("grant", chains.grantRecord, grantSource, now))))
      .groupBy(grants.hostname),
  ]);
  const out = new Map<string, { activeSessions: number; activeGrants: number }>();
  const entry = (hostname: string) => out.get(hostname) ?? out.set(hostname, { activeSessions: 0, activeGrants: 0 }).get(hostname)!;
  for (const r of sessions) if (r.hostname) entry(r.hostname).activeSessions = Number(r.n);
  for (const r of grantRows) if (r.hostname) entry(r.hostname).activeGrants = Number(r.n);
  return out;
}

/** Claims a hostname for the workspace, unverified: the page then shows the TXT record to publish. */
export const addHostname = defineOperation({
  name: "workspace.hostname_added",
  role: "admin",
  input: z.object({ hostname: text("a hostname", 300) }),
  async run(ctx, input) {
    const added = await addHostnameRow(ctx.db, { workspaceId: ctx.access.workspace.id, hostname: input.hostname, publicUrl: ctx.service.config.publicUrl, now: ctx.now }).catch(
      hostnameInputError("hostname"),
    );
    return { result: { id: added.id, hostname: added.hostname }, audit: { target: added.hostname, data: { hostname: added.hostname, hostname_id: added.id } } };
  },
});

/**
 * Looks for the hostname's TXT record (through the DNS proof's resolver, `proofDns`, replaced in
 * tests); found, the hostname is verified and serves the workspace at once; not found yet, the form
 * says why and nothing changes.
 */
export const verifyHostname = defineOperation({
  name: "workspace.hostname_verified",
  role: "admin",
  input: z.object({ hostname_id: id("hostname"), hostname: text("the hostname", 300) }),
  // The form names the hostname so the lookup runs before the transaction opens (a slow DNS server
  // must not hold the database); run() checks it is the claimed one.
  prepare: (input) => lookupVerificationRecords(input.hostname.toLowerCase(), proofDns.resolveTxt),
  async run(ctx, input, lookup) {
    const wid = ctx.access.workspace.id;
    const current = await getHostname(ctx.db, wid, input.hostname_id);
    if (!current) throw formError("This hostname is no longer claimed");
    if (current.hostname !== input.hostname.toLowerCase()) throw formError("The hostname changed meanwhile: reload the page");
    const outcome = await applyHostnameVerification(ctx.db, { workspaceId: wid, id: current.id, now: ctx.now, lookup }).catch(hostnameInputError());
    if (!outcome.verified) throw formError(`Not found yet: ${outcome.reason}. DNS changes can take a while to appear; check again later.`);
    return {
      result: { verified: true },
      audit: outcome.changed ? { target: current.hostname, data: { hostname: current.hostname, hostname_id: current.id, method: "dns" } } : null,
    };
  },
});

/** Makes a verified hostname the primary one (the issuer the console shows, links sent outside a request); empty: the default host. */
export const makePrimaryHostname = defineOperation({
  name: "workspace.primary_hostname_set",
  role: "admin",
  input: z.object({ hostname_id: optionalText(200) }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const previous = await primaryHostname(ctx.db, wid);
    const out = await makePrimaryHostnameRow(ctx.db, { workspaceId: wid, id: input.hostname_id ?? null }).catch(hostnameInputError());
    const hostname = out.hostname?.hostname ?? null;
    return {
      result: { hostname },
      audit: out.changed ? { ...(hostname ? { target: hostname } : {}), data: { hostname, hostname_id: out.hostname?.id ?? null, previous } } : null,
    };
  },
});

/**
 * Removes a hostname, confirmed by typing it: whoever is signed in there is signed out (its hosted
 * sessions end) and the grants made under its issuer are revoked, so applications using that
 * issuer stop working. Adding the name again revives none of it.
 */
export const removeHostname = defineOperation({
  name: "workspace.hostname_removed",
  role: "admin",
  input: z.object({ hostname_id: id("hostname"), confirm: confirmField() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const current = await getHostname(ctx.db, wid, input.hostname_id);
    if (!current) throw formError("This hostname is no longer claimed");
    requireConfirmation(input.confirm, current.hostname, "the hostname");
    const removed = await removeHostnameRow(ctx.db, { workspaceId: wid, id: current.id, now: ctx.now });
    if (!removed) throw formError("This hostname is no longer claimed");
    const { hostname } = removed;
    return {
      result: { hostname: hostname.hostname, sessionsEnded: removed.sessionsEnded, grantsRevoked: removed.grantsRevoked },
      audit: {
        target: hostname.hostname,
        data: {
          hostname: hostname.hostname,
          hostname_id: hostname.id,
          was_verified: hostname.verificationMethod,
          was_primary: hostname.primary,
          sessions_ended: removed.sessionsEnded,
          grants_ended: removed.grantsRevoked,
        },
      },
    };
  },
});

/** WebAuthn related origins (off by default): whether a passkey made at one of the workspace's hostnames may sign in at the others. */
export const setRelatedOrigins = defineOperation({
  name: "workspace.related_origins_set",
  role: "admin",
  input: z.object({ related_origins: checkbox() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const { changed } = await setRelatedOriginsRow(ctx.db, { workspaceId: wid, on: input.related_origins, now: ctx.now });
    return { result: { on: input.related_origins }, audit: changed ? { target: wid, data: { related_origins: input.related_origins } } : null };
  },
});
