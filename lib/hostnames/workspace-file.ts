/**
 * The workspace file's `hostnames` section (docs/workspace-file.md): the workspace's own
 * authentication hostnames and whether WebAuthn related origins are on across them.
 *
 * Import adds hostnames and, with `verified: true`, marks them verified on the installation
 * operator's word (audited). It never removes a hostname nor unverifies one: a hostname the file
 * leaves out stays, and removing one (which signs its users out) is the console's.
 */
import { z } from "zod";
import { recordAudit } from "../audit/events";
import { asString, defineWorkspaceSection, entries, jsonPath, WorkspaceFileError, type CrossCheck, type WorkspaceFileIssue } from "../surfaces/workspace-file";
import {
  addHostname,
  HostnameError,
  listHostnames,
  makePrimaryHostname,
  markHostnameVerifiedByOperator,
  MAX_HOSTNAMES,
  normalizeHostname,
  relatedOriginsOn,
  setRelatedOrigins,
} from "./hostnames";

export const hostnameSchema = z.strictObject({
  hostname: z.string().max(253, "must be at most 253 characters"),
  /**
   * true: the installation's operator vouches that the workspace controls the name (a file imported
   * with the latchkey command line; recorded in the audit log). Otherwise the hostname serves
   * nothing until its DNS TXT record is verified in the console. Absent or false never unverifies.
   */
  verified: z.boolean().optional(),
  /** The hostname the console shows as the workspace's issuer and links made outside a request use. Must be verified. */
  primary: z.boolean().optional(),
});

const shape = {
  /** The workspace's own authentication hostnames besides the installation's host (docs/hostnames.md). */
  hostnames: z.array(hostnameSchema).max(MAX_HOSTNAMES, `must have at most ${MAX_HOSTNAMES} hostnames`).default([]),
  /** WebAuthn related origins across the workspace's hostnames: a passkey made at the primary hostname works at the others. Off by default. */
  webauthn_related_origins: z.boolean().default(false),
};

/** Each hostname well formed and listed once; at most one primary. */
function checkHostnames(c: CrossCheck): void {
  const seen = new Map<string, number>();
  let primary: number | undefined;
  for (const [i, entry] of entries(c.doc, "hostnames")) {
    const raw = asString(entry.hostname);
    if (raw === undefined) continue;
    let name: string;
    try {
      name = normalizeHostname(raw);
    } catch (error) {
      if (!(error instanceof HostnameError)) throw error;
      c.add(["hostnames", i, "hostname"], error.message);
      continue;
    }
    const first = seen.get(name);
    if (first !== undefined) c.add(["hostnames", i, "hostname"], `duplicate hostname ${JSON.stringify(name)} (also at $.hostnames[${first}])`);
    else seen.set(name, i);
    if (entry.primary === true) {
      if (primary !== undefined) c.add(["hostnames", i, "primary"], `only one hostname can be primary (also $.hostnames[${primary}])`);
      else primary = i;
    }
  }
}

export const HOSTNAMES_SECTION = defineWorkspaceSection({
  name: "hostnames",
  shape,
  // After the workspace's own row and its branding; nothing refers to a hostname.
  after: "branding",
  check: checkHostnames,

  async import(ctx) {
    const { tx, file, now, wid, opts } = ctx;
    const issues: WorkspaceFileIssue[] = [];
    const at = (i: number, field: string) => jsonPath(["hostnames", i, field]);
    let held = new Map((await listHostnames(tx, wid)).map((h) => [h.hostname, h]));
    for (const [i, entry] of file.hostnames.entries()) {
      const hostname = normalizeHostname(entry.hostname);
      try {
        let row = held.get(hostname);
        if (!row) {
          row = await addHostname(tx, { workspaceId: wid, hostname, now });
          ctx.changes++;
        }
        if (entry.verified === true && row.verifiedAt === null) {
          // Only the installation's operator may vouch: a verified hostname is this workspace's alone.
          if (opts.actor) {
            issues.push({ path: at(i, "verified"), message: "can be set only by the installation's operator (latchkey workspace import): verify the hostname's DNS record in the console" });
            continue;
          }
          const verified = await markHostnameVerifiedByOperator(tx, { workspaceId: wid, id: row.id, now });
          if (verified.verified && verified.changed) {
            await recordAudit(tx, {
              workspaceId: wid,
              type: "workspace.hostname_verified",
              actor: opts.actor ?? null,
              subject: hostname,
              data: { hostname, hostname_id: row.id, method: "operator", source: "workspace import" },
              at: now,
            });
            ctx.changes++;
          }
        }
      } catch (error) {
        if (!(error instanceof HostnameError)) throw error;
        issues.push({ path: at(i, "hostname"), message: error.message });
      }
    }
    if (issues.length) throw new WorkspaceFileError(issues);
    held = new Map((await listHostnames(tx, wid)).map((h) => [h.hostname, h]));
    const primary = file.hostnames.findIndex((h) => h.primary === true);
    if (primary !== -1) {
      const row = held.get(normalizeHostname(file.hostnames[primary]!.hostname))!;
      if (row.verifiedAt === null) {
        throw new WorkspaceFileError([{ path: at(primary, "primary"), message: "a hostname must be verified before it can be primary" }]);
      }
      if ((await makePrimaryHostname(tx, { workspaceId: wid, id: row.id })).changed) ctx.changes++;
    }
    if ((await relatedOriginsOn(tx, wid)) !== file.webauthn_related_origins) {
      await setRelatedOrigins(tx, { workspaceId: wid, on: file.webauthn_related_origins, now });
      ctx.changes++;
    }
  },

  async export(db, workspaceId) {
    const [hostnames, relatedOrigins] = await Promise.all([listHostnames(db, workspaceId), relatedOriginsOn(db, workspaceId)]);
    return {
      hostnames: hostnames.map((h) => ({ hostname: h.hostname, ...(h.verifiedAt ? { verified: true } : {}), ...(h.primary ? { primary: true } : {}) })),
      webauthn_related_origins: relatedOrigins,
    };
  },
});
