/**
 * The issuers the console shows for a workspace: the one its applications are pointed at, and the
 * others it also answers as, with the page where they are managed. A feature that gives workspaces
 * addresses of their own declares them (lib/surfaces/feature.ts `issuers`, beside its
 * `consolePage`); without one, a workspace answers at the default host only.
 */
import { FEATURES } from "../features/registry";
import { issuerFor } from "../http/context";
import type { Service } from "../service";
import { declaredOnce, type Feature } from "../surfaces/feature";

export interface ConsoleIssuers {
  /** At the primary address, else at the default host. */
  primary: string;
  /** The other issuers the workspace answers as. */
  others: string[];
  /** Where the addresses are managed, below `/console/w/{workspace}`: the declaring feature's page. */
  page: { path: string; label: string } | null;
}

const owner: Feature | undefined = declaredOnce(FEATURES.map((f: Feature) => (f.issuers ? f : undefined)), "a workspace's issuers");

export async function workspaceIssuers(service: Service, workspaceId: string): Promise<ConsoleIssuers> {
  if (!owner?.issuers) return { primary: issuerFor(service.config.publicUrl, workspaceId), others: [], page: null };
  const { primary, others } = await owner.issuers(service, workspaceId);
  return { primary, others, page: owner.consolePage ? { path: owner.consolePage.path, label: owner.consolePage.label } : null };
}
