// The `users` section: users by normalized email, with the password hashes resolved before the transaction.
import { and, eq, inArray } from "drizzle-orm";
import { users } from "../../../db/schema";
import { newId } from "../../crypto";
import { displayEmail, normalizeEmail } from "../document";
import { chunks, differs, type ImportContext } from "./context";

export async function importUsers(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid, passwordHashes } = ctx;
  const { userPk } = ctx.ids;
  const existingUsers = new Map<string, typeof users.$inferSelect>();
  for (const part of chunks(file.users.map((u) => normalizeEmail(u.email)))) {
    const rows = await tx.select().from(users).where(and(eq(users.workspaceId, wid), inArray(users.emailNormalized, part)));
    for (const row of rows) existingUsers.set(row.emailNormalized, row);
  }
  for (const user of file.users) {
    const key = normalizeEmail(user.email);
    const passwordHash = passwordHashes.get(key);
    const desired = {
      email: displayEmail(user.email),
      name: user.name?.trim() || null,
      emailVerified: user.email_verified,
      status: user.status,
      // No password in the file leaves any existing password as it is.
      ...(passwordHash === undefined ? {} : { passwordHash }),
    };
    const existing = existingUsers.get(key);
    if (!existing) {
      const id = newId();
      await tx.insert(users).values({ id, workspaceId: wid, emailNormalized: key, ...desired, createdAt: now, updatedAt: now });
      userPk.set(key, id);
      ctx.changes++;
    } else {
      userPk.set(key, existing.id);
      if (differs(existing, desired)) {
        await tx.update(users).set({ ...desired, updatedAt: now }).where(eq(users.id, existing.id));
        ctx.changes++;
      }
    }
  }
}
