/**
 * Every sign-in step's route (and sign-up's, which the email step's module holds), in one list for
 * the route table (lib/server/router.ts): each module's own steps, and one typed-code step per
 * factor answered by a typed code (./typed-code.ts), at the path its factor declares. A new factor
 * answered by a typed code needs no line here.
 */
import type { Route } from "../../http/route";
import { emailRoutes } from "./email";
import { federationRoutes } from "./federation";
import { passwordResetRoutes } from "./password-reset";
import { totpRoutes } from "./totp";
import { typedCodeRoutes } from "./typed-code";
import { webauthnRoutes } from "./webauthn";

export const signInStepRoutes: Route[] = [
  ...emailRoutes,
  // A forgotten password reset by proving the mailbox, and a new password the sign-in asks for.
  ...passwordResetRoutes,
  // A typed code as a further factor, one route per factor that declares one.
  ...typedCodeRoutes,
  ...totpRoutes,
  ...webauthnRoutes,
  // Signing in through enterprise connections and social providers (lib/federation).
  ...federationRoutes,
];
