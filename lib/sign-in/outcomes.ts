/**
 * The sign-in's outcomes, signalled as `sign_in_factor` (lib/signals; the domain metrics count
 * them as `latchkey_sign_ins_total{method,outcome}`): each factor a step verified, where the flow
 * records it on the pending sign-in (./flow.ts `identify`, `prove`), and each factor a step
 * refused, where the refusal is recorded as the audit event `sign_in.failed` (./failures.ts, with
 * the methods as that event names them).
 * Attempts the guessing limits refuse before anything is checked are the limiter's
 * (`latchkey_rate_limit_refusals_total`), as they are not in the audit log either.
 */
import type { Evidence } from "../authn/evidence";
import { FACTOR_METRIC_LABELS, metricLabelOf } from "../authn/factors/registry";
import { signal, type SignInMethod } from "../signals";

/** A federated sign-in, by its source: an organization's enterprise connection (OIDC or SAML), or a social provider. */
const FEDERATED = ["enterprise", "social"] as const;

/**
 * Every value of `latchkey_sign_ins_total{method}`, a closed list: the labels the factors declare
 * (lib/authn/factors/registry.ts `FACTOR_METRIC_LABELS`), then the federated sources. Given to the
 * recorder when the metrics are enabled (server.ts, lib/metrics/listener.ts); docs/configuration.md lists it.
 */
export const SIGN_IN_METHODS: readonly SignInMethod[] = [...FACTOR_METRIC_LABELS, ...FEDERATED];

/** The method of a verified factor: its factor's label, a federated sign-in by its source (`connection:<id>` or `social:<id>`, lib/federation/identities.ts). */
export function signInMethodOf(event: Pick<Evidence, "method" | "factorId">): SignInMethod {
  if (event.method === "federated" || event.method === "federated_mfa") return event.factorId?.startsWith("social:") ? "social" : "enterprise";
  return metricLabelOf(event.method);
}

/** Signals a factor a step verified. */
export function signalVerified(event: Evidence): void {
  signal("sign_in_factor", { method: signInMethodOf(event), outcome: "success" });
}
