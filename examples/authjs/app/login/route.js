// app/login/route.js
import { randomBytes } from "node:crypto";
import { signIn } from "../../auth.js";

export async function GET() {
  // Latchkey requires a fresh random state of 24–128 base64url characters: Auth.js sends none.
  await signIn("latchkey", { redirectTo: "/" }, { state: randomBytes(32).toString("base64url") });
}
