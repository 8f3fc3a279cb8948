// Password hashes to store for the file's users, computed before the import's transaction.
import { and, eq, inArray } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { users } from "../../../db/schema";
import { hashPassword, verifyPassword } from "../../authn/password";
import { normalizeEmail, type WorkspaceDocument } from "../document";
import { chunks } from "./context";
import { PasswordRefused, screeningRefusal } from "../../authn/passwords/screening";
import { screeningOf } from "../../authn/passwords/workspace-file";
import { jsonPath, WorkspaceFileError, type WorkspaceFileIssue } from "../../surfaces/workspace-file";

/**
 * Password hashes to store, keyed by normalized email; computed before the transaction because
 * argon2 is slow. A plaintext password that the stored hash already verifies keeps that hash, so
 * re-importing a file is stable and does not invalidate anything. Any other plaintext password is
 * a new one: the file's `password_screening` screens it (the bundled list and the score; the
 * breach range service is not asked during an import), and a refused one fails the import at its
 * path with the reason.
 */
export async function resolvePasswordHashes(db: Database, file: WorkspaceDocument): Promise<Map<string, string>> {
  const wanted = file.users.filter((u) => u.password !== undefined || u.password_hash !== undefined);
  const stored = new Map<string, string | null>();
  const plain = wanted.filter((u) => u.password !== undefined).map((u) => normalizeEmail(u.email));
  for (const part of chunks(plain)) {
    const rows = await db
      .select({ emailNormalized: users.emailNormalized, passwordHash: users.passwordHash })
      .from(users)
      .where(and(eq(users.workspaceId, file.id), inArray(users.emailNormalized, part)));
    for (const row of rows) stored.set(row.emailNormalized, row.passwordHash);
  }
  const out = new Map<string, string>();
  const screening = screeningOf(file.password_screening);
  const refused: WorkspaceFileIssue[] = [];
  await Promise.all(
    wanted.map(async (user) => {
      const key = normalizeEmail(user.email);
      if (user.password_hash !== undefined) {
        out.set(key, user.password_hash);
        return;
      }
      const password = user.password as string;
      const current = stored.get(key);
      if (current && (await verifyPassword(current, password))) return void out.set(key, current);
      if (screening) {
        const refusal = await screeningRefusal(password, { minimumScore: screening.minimumScore, userInputs: [user.email, user.name ?? ""] });
        if (refusal) return void refused.push({ path: jsonPath(["users", file.users.indexOf(user), "password"]), message: new PasswordRefused(refusal).message });
      }
      out.set(key, await hashPassword(password));
    }),
  );
  if (refused.length) throw new WorkspaceFileError(refused.sort((a, b) => a.path.localeCompare(b.path, "en", { numeric: true })));
  return out;
}
