/**
 * Federation's short-lived rows (run by the one purger, lib/features/purge.ts): what each
 * connection protocol declares (lib/federation/protocols), such as a replay store.
 */
import { defineFeature } from "../surfaces/feature";
import { CONNECTION_PROTOCOLS } from "./protocols";

export const FEDERATION_FEATURE = defineFeature({ name: "federation", retention: Object.values(CONNECTION_PROTOCOLS).flatMap((p) => p.retention ?? []) });
