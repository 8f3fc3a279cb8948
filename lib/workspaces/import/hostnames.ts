// The `hostnames` section: hostnames are added and, with `verified: true`, marked verified on the
// installation operator's word (audited). Import never removes a hostname nor unverifies one: a
// hostname the file leaves out stays, and removing one (which signs its users out) is the console's.
import { recordAudit } from "../../audit/events";
import {
  addHostname,
  HostnameError,
  listHostnames,
  makePrimaryHostname,
  markHostnameVerifiedByOperator,
  normalizeHostname,
  relatedOriginsOn,
  setRelatedOrigins,
} from "../../hostnames/hostnames";
import { jsonPath, WorkspaceFileError, type WorkspaceFileIssue } from "../document";
import type { ImportContext } from "./context";

export async function importHostnames(ctx: ImportContext): Promise<void> {
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
}
