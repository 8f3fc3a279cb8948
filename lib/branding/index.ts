/**
 * Per-workspace branding of the hosted pages: the rule (./rule.ts), contrast arithmetic
 * (./contrast.ts), logos (./logo.ts), storage and the logo route (./store.ts) and the theme CSS
 * (./css.ts). See docs/branding.md.
 */
export * from "./contrast";
export * from "./rule";
export * from "./logo";
export * from "./store";
export * from "./css";
