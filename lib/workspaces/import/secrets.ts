// The file's secret references (`{ "env": NAME }`), read from the environment before the transaction; an unset one is a problem at its JSON path.
import { createPrivateKey } from "node:crypto";
import { WorkspaceFileError, type WorkspaceDocument, type WorkspaceFileIssue } from "../document";
import { jsonPath, type PathSegment } from "../document/paths";

export async function resolveSecretReferences(file: WorkspaceDocument, env: Record<string, string | undefined>): Promise<Map<string, string>> {
  const refs: Array<{ path: PathSegment[]; env: string; pem: boolean }> = [];
  file.social_providers.forEach((p, i) => {
    if (p.client_secret) refs.push({ path: ["social_providers", i, "client_secret", "env"], env: p.client_secret.env, pem: p.preset === "apple" });
  });
  file.organizations.forEach((o, i) =>
    o.connections.forEach((c, k) => {
      if (c.client_secret) refs.push({ path: ["organizations", i, "connections", k, "client_secret", "env"], env: c.client_secret.env, pem: false });
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
