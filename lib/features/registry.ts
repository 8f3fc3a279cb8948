/**
 * Every feature's descriptor (lib/surfaces/feature.ts), once: the surfaces (the console's
 * operations, the purger, …) read this list and never name a feature. A new feature is one line.
 * The order is the purge's order (a grant over is deleted, and counted, before its session).
 */
import { AUDIT_EVENTS } from "../audit/retention";
import { EMAIL_FEATURE } from "../authn/email/retention";
import { FACTORS_FEATURE } from "../authn/factors/retention";
import { ACCOUNT_SECURITY_FEATURE, SESSIONS_FEATURE } from "../authn/retention";
import { FEDERATION_FEATURE } from "../federation/retention";
import { RATE_LIMITS } from "../limits/rate-limit";
import { OAUTH_FEATURE } from "../oauth/retention";
import { defineFeature, type Feature } from "../surfaces/feature";
import { OPERATORS_FEATURE } from "../operators";

export const FEATURES: readonly Feature[] = [
  OAUTH_FEATURE,
  FACTORS_FEATURE,
  SESSIONS_FEATURE,
  ACCOUNT_SECURITY_FEATURE,
  FEDERATION_FEATURE,
  EMAIL_FEATURE,
  OPERATORS_FEATURE,
  // lib/audit and lib/limits sit below lib/surfaces: they declare their retention as plain values, typed here.
  defineFeature({ name: "audit", retention: [AUDIT_EVENTS] }),
  defineFeature({ name: "limits", retention: [RATE_LIMITS] }),
];
