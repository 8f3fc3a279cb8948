/**
 * Getting started: what a new workspace's overview offers until its first sign-in has been seen
 * (./checklist.ts), and trying an application's sign-in from the console (./try-sign-in.ts).
 */
import { defineFeature } from "../surfaces/feature";
import { trySignIn } from "./try-sign-in";

export const GETTING_STARTED_FEATURE = defineFeature({
  name: "getting-started",
  operations: { trySignIn },
});
