/**
 * Every feature's descriptor (lib/surfaces/feature.ts), once: the surfaces (the console's
 * operations, the workspace file, the purger, …) read this list and never name a feature. A new
 * feature is one line. The order is the purge's order (a grant over is deleted, and counted, before
 * its session). The list keeps each descriptor's own type (`as const`), so that what the surfaces
 * build from it (the console's `operations`, the workspace document's type) stays precise.
 */
import { AUDIT_EVENTS } from "../audit/retention";
import { BRANDING_FEATURE } from "../branding";
import { EMAIL_FEATURE } from "../authn/email/retention";
import { FACTORS_FEATURE } from "../authn/factors/retention";
import { ACCOUNT_SECURITY_FEATURE, SESSIONS_FEATURE } from "../authn/retention";
import { PASSWORDS_FEATURE } from "../authn/passwords";
import { BOT_CHALLENGE_FEATURE } from "../authn/bot-challenge";
import { FEDERATION_FEATURE } from "../federation/retention";
import { CONNECTION_TEST_FEATURE } from "../federation/connection-test";
import { GETTING_STARTED_FEATURE } from "../getting-started";
import { HOSTNAMES_FEATURE } from "../hostnames";
import { RATE_LIMITS } from "../limits/rate-limit";
import { SECURITY_ALERTS_FEATURE } from "../security-alerts";
import { OAUTH_FEATURE } from "../oauth/retention";
import { PUSHED_AUTHORIZATION_FEATURE } from "../oauth/pushed-authorization";
import { DEVICE_AUTHORIZATION_FEATURE } from "../oauth/device-authorization";
import { DPOP_FEATURE } from "../oauth/dpop";
import { OPERATORS_FEATURE } from "../operators";
import { SCIM_FEATURE } from "../organizations/scim";
import { ORGANIZATION_INVITATIONS_FEATURE } from "../organizations/invitations";
import { ADMIN_PORTAL_FEATURE } from "../organizations/admin-portal";
import { defineFeature, type Feature } from "../surfaces/feature";
import type { ApplicationOption } from "../surfaces/application-options";

export const FEATURES = [
  OAUTH_FEATURE,
  DEVICE_AUTHORIZATION_FEATURE,
  DPOP_FEATURE,
  FACTORS_FEATURE,
  SESSIONS_FEATURE,
  ACCOUNT_SECURITY_FEATURE,
  FEDERATION_FEATURE,
  EMAIL_FEATURE,
  OPERATORS_FEATURE,
  ORGANIZATION_INVITATIONS_FEATURE,
  HOSTNAMES_FEATURE,
  GETTING_STARTED_FEATURE,
  PASSWORDS_FEATURE,
  SECURITY_ALERTS_FEATURE,
  BOT_CHALLENGE_FEATURE,
  PUSHED_AUTHORIZATION_FEATURE,
  SCIM_FEATURE,
  CONNECTION_TEST_FEATURE,
  ADMIN_PORTAL_FEATURE,
  BRANDING_FEATURE,
  // lib/audit and lib/limits sit below lib/surfaces: they declare their retention as plain values, typed here.
  defineFeature({ name: "audit", retention: [AUDIT_EVENTS] }),
  defineFeature({ name: "limits", retention: [RATE_LIMITS] }),
] as const satisfies readonly Feature[];

/** Every feature's application options (lib/surfaces/application-options.ts), in the registry's order; a key declared twice fails at load. */
export const APPLICATION_OPTIONS: readonly ApplicationOption[] = FEATURES.flatMap((f: Feature) => f.applicationOptions ?? []).map((option, i, all) => {
  if (all.findIndex((other) => other.key === option.key) !== i) throw new Error(`application option ${option.key} is declared twice`);
  return option;
});

/** The features' operations, each feature's by name, as one object type (what lib/console's table spreads). */
export type FeatureOperations = UnionToIntersection<OperationsOf<(typeof FEATURES)[number]>>;
type OperationsOf<F> = F extends { operations: infer O } ? O : never;

/** The features' workspace-file sections, in the order listed (lib/workspaces places each after the one it names). */
export const WORKSPACE_SECTIONS = FEATURES.flatMap((f: Feature) => (f.workspaceFile ? [f.workspaceFile] : []));

/** The document keys the features' sections add, with their schemas, as one shape type (lib/workspaces' document type). */
export type FeatureDocumentShape = UnionToIntersection<ShapeOf<(typeof FEATURES)[number]>>;
type ShapeOf<F> = F extends { workspaceFile: { shape: infer S } } ? S : never;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** Every feature's console operations in one object (lib/console's table adds the console's own); a name declared twice fails at load. */
export const FEATURE_OPERATIONS = Object.fromEntries(
  FEATURES.flatMap((f: Feature) => Object.entries(f.operations ?? {})).map(([name, op], i, all) => {
    if (all.findIndex(([other]) => other === name) !== i) throw new Error(`console operation ${name} is declared by two features`);
    return [name, op];
  }),
) as FeatureOperations;
