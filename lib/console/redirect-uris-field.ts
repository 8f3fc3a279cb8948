/**
 * What the console's two application forms (new, and the application's settings) say about
 * redirect URIs, so they agree with each other and with the rule they are checked by
 * (./applications.ts `checkSettings`): an application that signs users in needs at least one, so
 * the field is never marked "(optional)"; a machine-to-machine one has none and no field. Plain
 * text only: the new-application form is a client component.
 */
import type { ClientType } from "../../db/schema/applications";

/** Whether the kind has the field (and then must fill it). */
export const hasRedirectUris = (type: ClientType) => type !== "M2M";

export const REDIRECT_URIS_HINT =
  "At least one. One per line, exact. https, or http on localhost / 127.0.0.1 / [::1]; no fragments. Native apps may use a reverse-domain scheme.";
