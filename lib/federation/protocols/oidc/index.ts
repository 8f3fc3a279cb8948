/**
 * OpenID Connect enterprise connections: the upstream issuer, the client id registered there and
 * its client secret (set once, kept when left empty, never shown or exported). The round trip is
 * lib/federation/upstream/oidc.ts, shared with the social providers; the callback is the
 * workspace's /federation/callback.
 */
import { z } from "zod";
import { encryptSecret } from "../../../crypto";
import { connectionSecretPurpose } from "../../secrets";
import { defineConnectionProtocol } from "../contract";

export interface OidcForm {
  issuer?: string;
  client_id?: string;
  client_secret?: string;
}

export interface OidcEntry {
  issuer?: string;
  client_id?: string;
  client_secret?: { env: string };
}

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);

export const OIDC = defineConnectionProtocol<OidcForm, OidcEntry>({
  kind: "oidc",
  label: "OpenID Connect",
  noun: "an OIDC connection",
  clientSecret: true,
  console: {
    fields: (f) => ({
      issuer: f.optionalUpstreamUrl,
      client_id: f.optionalText(200),
      client_secret: f.optionalText(2000),
    }),
    async check(_ctx, input, errors) {
      if (!input.issuer) errors.issuer = "Enter the upstream issuer";
      if (!input.client_id) errors.client_id = "Enter the client id registered upstream";
    },
    async settings(ctx, input, previous) {
      const config = { issuer: input.issuer, client_id: input.client_id };
      return {
        config,
        auditConfig: config,
        // A new secret when given; otherwise the old one, but never another protocol's secret (a SAML connection's SP key).
        secretEncrypted: input.client_secret
          ? encryptSecret(ctx.service.config.masterKey, input.client_secret, connectionSecretPurpose(ctx.connectionId))
          : previous && previous.kind !== "oidc"
            ? null
            : undefined,
        secretChanged: !!input.client_secret,
      };
    },
  },
  file: {
    fields: (f) => ({
      issuer: f.upstreamUrl.optional(),
      client_id: z.string().trim().min(1, "must not be blank").max(200, "must be at most 200 characters").optional(),
      client_secret: f.secretReference.optional(),
    }),
    own: ["issuer", "client_id", "client_secret"],
    check(entry, issue) {
      if (entry.issuer === undefined) issue("issuer", "is required for an OIDC connection");
      if (entry.client_id === undefined) issue("client_id", "is required for an OIDC connection");
    },
    secretReferences: (entry) => (entry.client_secret ? [{ path: ["client_secret", "env"], env: entry.client_secret.env }] : []),
    export(config) {
      const issuer = str(config.issuer);
      const clientId = str(config.client_id);
      return issuer && clientId ? { issuer, client_id: clientId } : null;
    },
    async import(deps, connectionId, entry, row) {
      const secret = entry.client_secret ? deps.secrets.get(entry.client_secret.env) : undefined;
      const sealed = deps.sealedIfChanged(row?.secretEncrypted ?? null, secret, connectionSecretPurpose(connectionId));
      return { config: { issuer: entry.issuer, client_id: entry.client_id }, secretEncrypted: sealed, secretChanged: sealed !== undefined };
    },
  },
});
