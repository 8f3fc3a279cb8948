// The `hostnames` section: the workspace's own authentication hostnames (lib/hostnames) and
// whether WebAuthn related origins are on across them.
import { z } from "zod";
import { HostnameError, MAX_HOSTNAMES, normalizeHostname } from "../../hostnames/hostnames";
import { asString, entries, type CrossCheck } from "./checks";

export const hostnameSchema = z.strictObject({
  hostname: z.string().max(253, "must be at most 253 characters"),
  /**
   * true: the installation's operator vouches that the workspace controls the name (a file imported
   * with the latchkey command line; recorded in the audit log). Otherwise the hostname serves
   * nothing until its DNS TXT record is verified in the console. Absent or false never unverifies.
   */
  verified: z.boolean().optional(),
  /** The hostname the console shows as the workspace's issuer and links made outside a request use. Must be verified. */
  primary: z.boolean().optional(),
});

export const hostnamesSchema = z.array(hostnameSchema).max(MAX_HOSTNAMES, `must have at most ${MAX_HOSTNAMES} hostnames`).default([]);

/** Each hostname well formed and listed once; at most one primary. */
export function checkHostnames(c: CrossCheck): void {
  const seen = new Map<string, number>();
  let primary: number | undefined;
  for (const [i, entry] of entries(c.doc, "hostnames")) {
    const raw = asString(entry.hostname);
    if (raw === undefined) continue;
    let name: string;
    try {
      name = normalizeHostname(raw);
    } catch (error) {
      if (!(error instanceof HostnameError)) throw error;
      c.add(["hostnames", i, "hostname"], error.message);
      continue;
    }
    const first = seen.get(name);
    if (first !== undefined) c.add(["hostnames", i, "hostname"], `duplicate hostname ${JSON.stringify(name)} (also at $.hostnames[${first}])`);
    else seen.set(name, i);
    if (entry.primary === true) {
      if (primary !== undefined) c.add(["hostnames", i, "primary"], `only one hostname can be primary (also $.hostnames[${primary}])`);
      else primary = i;
    }
  }
}
