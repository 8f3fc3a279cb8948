import { defineApplicationOption } from "../../surfaces/application-options";

/**
 * RFC 9449 §5.2's client metadata: the application's token requests must carry a DPoP proof, so
 * every access token it gets is bound to its key. Off, a proof is accepted but not required.
 * Not for M2M applications: their (sealed) tokens are never bound (docs/token-lifecycle.md).
 */
export const DPOP_BOUND_ACCESS_TOKENS = defineApplicationOption({
  key: "dpop_bound_access_tokens",
  label: "Require DPoP-bound access tokens",
  hint: "Token requests must carry a DPoP proof (RFC 9449): access tokens, and a public client's refresh tokens, are bound to the application's key and useless without it.",
  types: ["PUBLIC", "WEB_CONFIDENTIAL"],
});
