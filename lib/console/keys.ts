/** Signing-key rotation from the console: publish the next key, then activate it (lib/oauth/keys.ts). */
import { z } from "zod";
import { activatePublishedKey, publishNextSigningKey } from "../oauth/keys";
import { defineOperation } from "./operation";

export const publishKey = defineOperation({
  name: "signing_key.published",
  role: "admin",
  input: z.object({}),
  async run(ctx) {
    // A SigningKeyError is answered over the form, as every "operator" coded error (runOperation).
    const published = await publishNextSigningKey({ ...ctx.service, db: ctx.db }, ctx.access.workspace.id);
    return { result: published, audit: { target: published.kid, data: { kid: published.kid, activatable_at: published.activatableAt.toISOString() } } };
  },
});

export const activateKey = defineOperation({
  name: "signing_key.activated",
  role: "admin",
  input: z.object({}),
  async run(ctx) {
    const activated = await activatePublishedKey({ ...ctx.service, db: ctx.db }, ctx.access.workspace.id);
    return {
      result: activated,
      audit: { target: activated.kid, data: { kid: activated.kid, retired: activated.retired, unpublish_at: activated.unpublishAt?.toISOString() ?? null } },
    };
  },
});
