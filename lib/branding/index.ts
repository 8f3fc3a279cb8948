/**
 * The branding feature's descriptor (lib/surfaces/feature.ts), read by the registries
 * (lib/features/registry.ts): its routes (./routes.ts, which the route table reads through the lean
 * lib/features/routes.ts). Its rules are ./rule.ts (the resolved branding), ./logo.ts (what a logo
 * may be) and ./store.ts (reading, writing and serving them).
 */
import { defineFeature } from "../surfaces/feature";
import { BRANDING_ROUTES } from "./routes";

export const BRANDING_FEATURE = defineFeature({ name: "branding", routes: BRANDING_ROUTES });
