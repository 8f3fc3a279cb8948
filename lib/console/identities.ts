/**
 * A user's linked upstream identities in the console (lib/federation/identities.ts), and their
 * unlinking by an administrator (a user who lost access to the provider, or a wrong link).
 */
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { users } from "../../db/schema";
import { listLinkedIdentities, unlinkIdentity, type LinkedIdentity } from "../federation/identities";
import type { Service } from "../service";
import { id } from "./forms";
import { defineOperation, formError } from "./operation";

export type { LinkedIdentity };

export async function userIdentities(service: Service, workspaceId: string, userId: string): Promise<LinkedIdentity[]> {
  return listLinkedIdentities(service.db, workspaceId, userId);
}

export const unlinkUserIdentity = defineOperation({
  name: "user.identity_unlinked",
  role: "admin",
  input: z.object({ user_id: id("user"), identity_id: id("linked sign-in") }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [user] = await ctx.db.select({ id: users.id, email: users.email }).from(users).where(and(eq(users.workspaceId, wid), eq(users.id, input.user_id))).limit(1);
    if (!user) throw formError("This user no longer exists");
    const removed = await unlinkIdentity(ctx.db, wid, user.id, input.identity_id);
    if (!removed) throw formError("This sign-in is no longer linked");
    return { result: null, audit: { target: user.email, data: { user_id: user.id, identity_id: input.identity_id, issuer: removed.issuer, subject: removed.subject } } };
  },
});
