/**
 * A workspace's sections in the console's side navigation: the console's own, and each feature's
 * page (lib/surfaces/feature.ts `consolePage`, read from lib/features/registry.ts) after the entry
 * it names. Computed on the server and handed to the navigation as data (it is a client component,
 * which must not load the registry).
 */
import { FEATURES } from "../features/registry";
import type { Feature } from "../surfaces/feature";

export interface NavigationEntry {
  /** Below `/console/w/{workspace}`; `""` is the overview. */
  href: string;
  label: string;
  /** Administrators only. */
  admin?: boolean;
}

const CONSOLE_SECTIONS: readonly NavigationEntry[] = [
  { href: "", label: "Overview" },
  { href: "/applications", label: "Applications" },
  { href: "/authentication", label: "Authentication" },
  { href: "/apis", label: "APIs" },
  { href: "/roles", label: "Roles" },
  { href: "/users", label: "Users" },
  { href: "/organizations", label: "Organizations" },
  { href: "/social", label: "Social sign-in" },
  { href: "/branding", label: "Branding" },
  { href: "/keys", label: "Signing keys" },
  { href: "/audit", label: "Audit log" },
  { href: "/operators", label: "Operators" },
  { href: "/settings", label: "Settings" },
  // Holds live sign-in codes: administrators only.
  { href: "/outbox", label: "Outbox", admin: true },
];

function withFeaturePages(own: readonly NavigationEntry[], features: readonly Feature[]): NavigationEntry[] {
  const entries = [...own];
  for (const { consolePage: page } of features) {
    if (!page) continue;
    const at = entries.findIndex((e) => e.href === page.after);
    if (at < 0) throw new Error(`console page ${page.path} follows ${page.after || "the overview"}, which the navigation does not list`);
    entries.splice(at + 1, 0, { href: page.path, label: page.label });
  }
  return entries;
}

const SECTIONS = withFeaturePages(CONSOLE_SECTIONS, FEATURES);
const VIEWER_SECTIONS = SECTIONS.filter((s) => !s.admin);

/** The sections an operator with this role sees in the navigation, in order. */
export function workspaceNavigation(administrator: boolean): readonly NavigationEntry[] {
  return administrator ? SECTIONS : VIEWER_SECTIONS;
}
