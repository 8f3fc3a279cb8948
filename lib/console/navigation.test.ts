import { describe, expect, it } from "vitest";
import { FEATURES } from "../features/registry";
import type { Feature } from "../surfaces/feature";
import { workspaceNavigation } from "./navigation";

describe("the console's side navigation", () => {
  it("lists every feature's declared page, after the entry it names", () => {
    const entries = workspaceNavigation(true);
    const pages = FEATURES.flatMap((f: Feature) => (f.consolePage ? [f.consolePage] : []));
    expect(pages.length).toBeGreaterThan(0);
    for (const page of pages) {
      const at = entries.findIndex((e) => e.href === page.path);
      expect(entries[at]).toEqual({ href: page.path, label: page.label });
      expect(entries[at - 1].href).toBe(page.after);
    }
  });

  it("shows administrators' entries to administrators only", () => {
    const admin = workspaceNavigation(true).filter((e) => e.admin);
    expect(admin.map((e) => e.href)).toEqual(["/outbox"]);
    expect(workspaceNavigation(false)).toEqual(workspaceNavigation(true).filter((e) => !e.admin));
  });
});
