/**
 * Import of the workspace file: validation of the whole document, then one step per section of
 * the file, in order, within one transaction (all or nothing), which announces the change to every
 * serving process (lib/service.ts `announceChange`). lib/workspaces' own sections are OWN_STEPS;
 * a feature's section (lib/surfaces/workspace-file.ts) is written after the one it names.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { writeAudit } from "../../audit/events";
import { announceChange } from "../../service";
import { WORKSPACE_SECTIONS } from "../../features/registry";
import { inSectionOrder } from "../../surfaces/workspace-file";
import { validateWorkspaceDocument } from "../document";
import { importApiGrants } from "./api-grants";
import { importApis } from "./apis";
import { importApplications } from "./applications";
import { importBranding } from "./branding";
import type { GeneratedSecret, ImportContext, ImportOptions, ImportResult, ImportStep } from "./context";
import { importOrganizationMembers } from "./organization-members";
import { importOrganizations } from "./organizations";
import { resolvePasswordHashes } from "./passwords";
import { importRoles } from "./roles";
import { resolveSecretReferences } from "./secrets";
import { importSocialProviders } from "./social-providers";
import { importUserRoles } from "./user-roles";
import { importUsers } from "./users";
import { importWorkspaceRow } from "./workspace";

export type { GeneratedSecret, ImportOptions, ImportResult, MembershipChange } from "./context";

/** Ends a dry run's transaction (rolled back), carrying what the import would have done. */
class DryRunRollback extends Error {
  constructor(readonly result: ImportResult) {
    super("dry run");
  }
}

/** lib/workspaces' own sections in the order they are written: each step may use the ids of the steps before it. */
const OWN_STEPS: ReadonlyArray<readonly [string, ImportStep]> = [
  ["workspace", importWorkspaceRow],
  ["branding", importBranding],
  ["applications", importApplications],
  ["social_providers", importSocialProviders],
  ["apis", importApis],
  ["api_grants", importApiGrants],
  ["roles", importRoles],
  ["organizations", importOrganizations],
  ["users", importUsers],
  ["organization_members", importOrganizationMembers],
  ["user_roles", importUserRoles],
];

/** Every section in the order it is written, the features' after the ones they name. */
const IMPORT_STEPS: readonly ImportStep[] = inSectionOrder(OWN_STEPS, WORKSPACE_SECTIONS, (s) => s.import);

/**
 * Validates `doc` and writes it. Throws WorkspaceFileError (nothing written) when the document is
 * invalid or names the operator workspace.
 */
export async function importWorkspace(db: Database, doc: unknown, opts: ImportOptions): Promise<ImportResult> {
  const file = validateWorkspaceDocument(doc);
  const secrets = await resolveSecretReferences(file, opts.env ?? process.env);
  const passwordHashes = await resolvePasswordHashes(db, file);
  const { clock } = opts;
  const generated: GeneratedSecret[] = [];

  const run = db.transaction(async (tx) => {
    const now = clock.now();
    const wid = file.id;
    // Concurrent imports of one workspace run one after the other, so neither duplicates rows.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:workspace-import:${wid}`}))`);

    const ctx: ImportContext = {
      tx,
      file,
      opts,
      clock,
      now,
      wid,
      passwordHashes,
      secrets,
      ids: { clientPk: new Map(), apiPk: new Map(), rolePk: new Map(), orgPk: new Map(), userPk: new Map(), socialPk: new Map() },
      generated,
      members: { removed: [], kept: [] },
      created: false,
      changes: 0,
    };
    for (const step of IMPORT_STEPS) await step(ctx);
    const { created, changes } = ctx;

    if (changes > 0) {
      // Whoever caches this workspace (its name, where it is served) drops it once this commits.
      await announceChange(tx, wid);
      await writeAudit(tx, {
        workspaceId: wid,
        type: "workspace.imported",
        actor: opts.actor ?? null,
        data: {
          created,
          changes,
          ...(ctx.members.removed.length ? { members_removed: ctx.members.removed } : {}),
          ...(ctx.members.kept.length ? { members_kept: ctx.members.kept.length } : {}),
          ...(opts.pruneMembers ? { prune_members: true } : {}),
        },
        at: now,
      });
    }

    const result: ImportResult = {
      workspaceId: wid,
      created,
      changes,
      ...(generated.length > 0 && !opts.dryRun ? { generatedSecrets: generated } : {}),
      members: ctx.members,
      dryRun: opts.dryRun === true,
    };
    if (opts.dryRun) throw new DryRunRollback(result);
    return result;
  });
  return run.catch((error: unknown) => {
    if (error instanceof DryRunRollback) return error.result;
    throw error;
  });
}
