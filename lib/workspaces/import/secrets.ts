// Upstream client secrets: the file's references (`{ "env": NAME }`), read from the environment before the import's transaction (an unset one is a problem at its JSON path), and the CLI's way of setting one directly.
import { createPrivateKey } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { enterpriseConnections, organizations, socialProviders } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import type { Clock } from "../../clock";
import { encryptSecret } from "../../crypto";
import { WorkspaceFileError, type WorkspaceDocument, type WorkspaceFileIssue } from "../document";
import { jsonPath, type PathSegment } from "../../surfaces/workspace-file/paths";
import { connectionSecretPurpose } from "../../federation/secrets";
import { CONNECTION_PROTOCOLS } from "../../federation/protocols";
import { CodedError } from "../../coded-error";
import { socialSecretPurpose } from "./social-providers";

export async function resolveSecretReferences(file: WorkspaceDocument, env: Record<string, string | undefined>): Promise<Map<string, string>> {
  const refs: Array<{ path: PathSegment[]; env: string; pem: boolean }> = [];
  file.social_providers.forEach((p, i) => {
    if (p.client_secret) refs.push({ path: ["social_providers", i, "client_secret", "env"], env: p.client_secret.env, pem: p.preset === "apple" });
  });
  file.organizations.forEach((o, i) =>
    o.connections.forEach((c, k) => {
      for (const ref of CONNECTION_PROTOCOLS[c.protocol].file.secretReferences(c)) refs.push({ path: ["organizations", i, "connections", k, ...ref.path], env: ref.env, pem: false });
    }),
  );
  const issues: WorkspaceFileIssue[] = [];
  const out = new Map<string, string>();
  for (const ref of refs) {
    const value = env[ref.env];
    if (value === undefined || value.trim() === "") {
      issues.push({ path: jsonPath(ref.path), message: `the environment variable ${ref.env} is not set (set it where the import runs, or leave client_secret out and use the CLI)` });
      continue;
    }
    if (value.length > 10_000) {
      issues.push({ path: jsonPath(ref.path), message: `the environment variable ${ref.env} holds more than 10000 characters` });
      continue;
    }
    if (ref.pem) {
      try {
        createPrivateKey(value);
      } catch {
        issues.push({ path: jsonPath(ref.path), message: `the environment variable ${ref.env} must hold Apple's private key (PEM, -----BEGIN PRIVATE KEY-----)` });
        continue;
      }
    }
    out.set(ref.env, ref.pem ? value : value.trim());
  }
  if (issues.length) throw new WorkspaceFileError(issues);
  return out;
}

export class UpstreamSecretError extends CodedError<"upstream_secret_refused"> {
  constructor(message: string) {
    super("upstream_secret_refused", message);
    this.name = "UpstreamSecretError";
  }
}

export type UpstreamSecretTarget =
  | { kind: "connection"; organizationSlug: string; connectionName: string }
  | { kind: "social"; providerKey: string };

/**
 * Sets an upstream client secret outside the workspace file (the CLI reads it from standard
 * input): encrypted under the master key with the purpose sign-in decrypts it with, audited.
 * Throws UpstreamSecretError naming what was not found or why the value cannot be used.
 */
export async function setUpstreamSecret(
  db: Database,
  input: { workspaceId: string; target: UpstreamSecretTarget; secret: string; masterKey: Buffer; clock: Clock },
): Promise<{ id: string; description: string }> {
  const secret = input.secret.trim();
  if (secret === "") throw new UpstreamSecretError("The secret is empty: pass it on standard input.");
  if (secret.length > 10_000) throw new UpstreamSecretError("The secret is longer than 10000 characters.");
  const now = input.clock.now();
  const wid = input.workspaceId;
  return db.transaction(async (tx) => {
    let id: string;
    let description: string;
    if (input.target.kind === "connection") {
      const { organizationSlug, connectionName } = input.target;
      const [org] = await tx.select({ id: organizations.id }).from(organizations).where(and(eq(organizations.workspaceId, wid), eq(organizations.slug, organizationSlug)));
      if (!org) throw new UpstreamSecretError(`No organization "${organizationSlug}" in workspace "${wid}".`);
      const [connection] = await tx
        .select({ id: enterpriseConnections.id, kind: enterpriseConnections.kind })
        .from(enterpriseConnections)
        .where(and(eq(enterpriseConnections.workspaceId, wid), eq(enterpriseConnections.organizationId, org.id), eq(enterpriseConnections.name, connectionName)));
      if (!connection) throw new UpstreamSecretError(`Organization "${organizationSlug}" has no connection named "${connectionName}".`);
      if (!CONNECTION_PROTOCOLS[connection.kind].clientSecret) throw new UpstreamSecretError(`"${connectionName}" is ${CONNECTION_PROTOCOLS[connection.kind].noun}: it has no client secret.`);
      id = connection.id;
      description = `connection "${connectionName}" of organization ${organizationSlug}`;
      await tx
        .update(enterpriseConnections)
        .set({ secretEncrypted: encryptSecret(input.masterKey, secret, connectionSecretPurpose(id)), updatedAt: now })
        .where(eq(enterpriseConnections.id, id));
      await recordAudit(tx, { workspaceId: wid, type: "organization.connection_secret_set", subject: organizationSlug, data: { connection_id: id, name: connectionName, source: "cli" }, at: now });
    } else {
      const { providerKey } = input.target;
      const [provider] = await tx
        .select({ id: socialProviders.id, preset: socialProviders.preset })
        .from(socialProviders)
        .where(and(eq(socialProviders.workspaceId, wid), eq(socialProviders.key, providerKey)));
      if (!provider) throw new UpstreamSecretError(`No social provider "${providerKey}" in workspace "${wid}".`);
      if (provider.preset === "apple") {
        try {
          createPrivateKey(secret);
        } catch {
          throw new UpstreamSecretError("Apple needs its private key (PEM, -----BEGIN PRIVATE KEY-----) on standard input.");
        }
      }
      id = provider.id;
      description = `social provider ${providerKey}`;
      await tx
        .update(socialProviders)
        .set({ secretEncrypted: encryptSecret(input.masterKey, secret, socialSecretPurpose(id)), updatedAt: now })
        .where(eq(socialProviders.id, id));
      await recordAudit(tx, { workspaceId: wid, type: "social_provider.secret_set", subject: providerKey, data: { provider_id: id, source: "cli" }, at: now });
    }
    return { id, description };
  });
}
