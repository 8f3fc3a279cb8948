/**
 * The one verification of a code the user types as a further factor (an authenticator app's, a
 * recovery code: ./contract.ts `TypedCodeAnswer`), used by the sign-in's step
 * (lib/sign-in/steps/typed-code.ts) and the portal's verification
 * (lib/account-security/portal-routes.ts) alike: the account looked up in the workspace, the
 * factor's guessing gate for the account (`answer.gate`, ./limits.ts `factorGate`), the code
 * checked once (`answer.check`), the account judged once the code verified (still in the workspace
 * and `active`, as the password's, the email code's and WebAuthn's verifications judge it), and
 * every refusal recorded on the gate. A limited attempt is not checked. What a refusal is shown as, and whether it is also a failed sign-in, is the caller's.
 */
import { and, eq } from "drizzle-orm";
import { users } from "../../../db/schema";
import { clientAddressOf } from "../../http/client-address";
import type { EndpointContext } from "../../http/context";
import type { Evidence, EvidenceMethod } from "../evidence";
import type { TypedCodeAnswer } from "./contract";
import { factorGate } from "./limits";

export type TypedCodeVerification =
  | { ok: true; userId: string; evidence: Evidence }
  /** The account is not in this workspace (any more): nothing was checked or counted. */
  | { ok: false; reason: "unknown_account" }
  /** A guessing limit reached: the code was not checked. */
  | { ok: false; reason: "limited" }
  /** A wrong, used or replayed code, or a right one for an account no longer active: counted on the gate. */
  | { ok: false; reason: "invalid" };

/** The account's address, as typed and normalized, and its status, in this workspace. */
export async function accountEmail(ctx: Pick<EndpointContext, "service" | "workspace">, userId: string): Promise<{ email: string; normalized: string; status: string } | null> {
  const [user] = await ctx.service.db
    .select({ email: users.email, normalized: users.emailNormalized, status: users.status })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, userId)))
    .limit(1);
  return user ?? null;
}

/** Verifies `code` for the user under the factor's `answer`. */
export async function verifyTypedCode(
  ctx: EndpointContext,
  request: Request,
  answer: TypedCodeAnswer<EvidenceMethod>,
  userId: string,
  code: string,
): Promise<TypedCodeVerification> {
  const user = await accountEmail(ctx, userId);
  if (!user) return { ok: false, reason: "unknown_account" };
  const gate = await factorGate(ctx, request, answer.gate, user.normalized);
  if (!gate.allowed) return { ok: false, reason: "limited" };
  const result = await answer.check(ctx, userId, code, clientAddressOf(request.headers, ctx.service.config.trustProxy));
  // A disabled account's right code is refused like a wrong one (and counted): the account as it is
  // once the code is spent, not as it was before.
  if (result.ok && (await accountEmail(ctx, userId))?.status === "active") return result;
  await gate.record();
  return { ok: false, reason: "invalid" };
}
