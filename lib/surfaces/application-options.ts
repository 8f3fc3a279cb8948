/**
 * A protocol option a feature lets an application switch on (the device authorization grant,
 * sender-constrained tokens, pushed authorization requests): declared in the feature's folder,
 * stored in the application's `options` (db/schema/applications.ts), set by the workspace file (a
 * key of the application's entry) and by the console (the application's Protocol card), both of
 * which read the registry (lib/features/registry.ts `APPLICATION_OPTIONS`) and never name an option.
 * Every option is off unless switched on, so an application that sets none behaves as before.
 */
import type { ClientType } from "../../db/schema/applications";

export interface ApplicationOption {
  /** Its key in the application's entry of the workspace file and in `clients.options`: snake_case, as the RFC names its client metadata where one does. */
  key: string;
  /** The console's label for the switch. */
  label: string;
  /** One or two sentences under it: what it changes for the application's clients. */
  hint: string;
  /** The client types it applies to: the workspace file refuses it on another, the console does not offer it. */
  types: readonly ClientType[];
}

export const defineApplicationOption = (option: ApplicationOption): ApplicationOption => option;

/**
 * Whether the application has switched `option` on, and is of a client type the option applies to
 * (a value stored for another type, say before the application's type changed, counts as off). The
 * hot paths read this from the client row they already hold.
 */
export function applicationOptionOn(client: { type: ClientType; options: Readonly<Record<string, boolean>> | null | undefined }, option: Pick<ApplicationOption, "key" | "types">): boolean {
  return client.options?.[option.key] === true && option.types.includes(client.type);
}
