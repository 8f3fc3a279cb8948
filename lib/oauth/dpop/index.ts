/**
 * Sender-constrained tokens (DPoP, RFC 9449), every surface declared here and read by the
 * registries (lib/features/registry.ts): the application option `dpop_bound_access_tokens`
 * (./option.ts) and the retention of the replay cache. Its rules: ./proof.ts (a proof and its
 * replay), ./nonce.ts (server nonces), ./token-request.ts (the token endpoint's step),
 * ./binding.ts (what a grant binds), ./resource.ts (UserInfo, the session check, the permission
 * check), ./refusals.ts (how each boundary answers). docs/token-lifecycle.md describes it.
 */
import { dpopProofs } from "../../../db/schema";
import { defineFeature } from "../../surfaces/feature";
import { defineRetention } from "../../surfaces/retention";
import { DPOP_BOUND_ACCESS_TOKENS } from "./option";

/** A claimed proof is kept while it could still be accepted (its iat window); then it is a proof no longer, and goes. */
export const DPOP_PROOFS = defineRetention({
  name: "dpop_proofs",
  table: dpopProofs,
  key: dpopProofs.proofHash,
  expiresAt: dpopProofs.expiresAt,
  grace: 0,
  workspaceId: dpopProofs.workspaceId,
});

export const DPOP_FEATURE = defineFeature({
  name: "dpop",
  applicationOptions: [DPOP_BOUND_ACCESS_TOKENS],
  retention: [DPOP_PROOFS],
});
