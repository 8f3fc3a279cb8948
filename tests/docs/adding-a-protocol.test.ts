/**
 * docs/architecture.md "Adding an upstream protocol" lists the places an upstream protocol (and an
 * enterprise connection's protocol) is written. Each is checked here for every protocol there is,
 * and the list is what the checks cover: a file the page names and nothing checks (or the reverse)
 * fails.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { pageSection } from "../helpers/generated-doc";
import { describe, expect, it } from "vitest";
import { CONNECTION_PARTS } from "../../components/federation";
import { enterpriseConnections } from "../../db/schema";
import { CONNECTION_KINDS, CONNECTION_PROTOCOLS } from "../../lib/federation/protocols";

const root = path.join(import.meta.dirname, "..", "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const section = pageSection("docs/architecture.md", "## Adding an upstream protocol");
const steps = section.slice(section.indexOf("1. Add the protocol's name"), section.indexOf("That is the whole list"));

/** The protocols an upstream round trip speaks (`UpstreamProtocol`, a type: read from its source). */
const contract = read("lib/federation/upstream/contract.ts");
const UPSTREAM_PROTOCOLS = [...(/export type UpstreamProtocol = ([^;]+);/.exec(contract)?.[1] ?? "").matchAll(/"(\w+)"/g)].map((m) => m[1]);

const FILES: Record<string, () => void> = {
  "lib/federation/upstream/contract.ts": () => {
    expect(UPSTREAM_PROTOCOLS.length).toBeGreaterThanOrEqual(3);
    for (const kind of CONNECTION_KINDS) expect(UPSTREAM_PROTOCOLS, kind).toContain(kind);
  },
  "lib/federation/upstream/<protocol>.ts": () => {
    for (const p of UPSTREAM_PROTOCOLS) expect(existsSync(path.join(root, "lib", "federation", "upstream", `${p}.ts`)), p).toBe(true);
  },
  "lib/federation/upstream/index.ts": () => {
    const index = read("lib/federation/upstream/index.ts");
    for (const p of UPSTREAM_PROTOCOLS) expect(index, p).toContain(`from "./${p}"`);
    // OpenID Connect is the default branch; every other protocol is dispatched by name.
    for (const p of UPSTREAM_PROTOCOLS.filter((p) => p !== "oidc")) expect(index, p).toContain(`provider.protocol === "${p}"`);
  },
  "lib/federation/upstream/presets.ts": () => {
    const presets = read("lib/federation/upstream/presets.ts");
    for (const p of UPSTREAM_PROTOCOLS) expect(presets, p).toContain(`protocol: "${p}"`);
  },
  "lib/federation/protocols/<protocol>/": () => {
    const dir = path.join(root, "lib", "federation", "protocols");
    const folders = readdirSync(dir).filter((f) => statSync(path.join(dir, f)).isDirectory());
    expect(folders.sort()).toEqual([...CONNECTION_KINDS].sort());
    for (const kind of CONNECTION_KINDS) expect(existsSync(path.join(dir, kind, "index.ts")), kind).toBe(true);
  },
  "lib/federation/protocols/index.ts": () => {
    for (const kind of CONNECTION_KINDS) expect(CONNECTION_PROTOCOLS[kind], kind).toBeDefined();
    expect(Object.keys(CONNECTION_PROTOCOLS).sort()).toEqual([...CONNECTION_KINDS].sort());
  },
  "db/schema/organizations.ts": () => {
    expect([...enterpriseConnections.kind.enumValues].sort()).toEqual([...CONNECTION_KINDS].sort());
  },
  "components/federation/index.ts": () => {
    expect(Object.keys(CONNECTION_PARTS).sort()).toEqual([...CONNECTION_KINDS].sort());
  },
  "components/federation/<protocol>.tsx": () => {
    for (const kind of CONNECTION_KINDS) expect(existsSync(path.join(root, "components", "federation", `${kind}.tsx`)), kind).toBe(true);
  },
  "tests/integration/federation/": () => {
    const tests = readdirSync(path.join(root, "tests", "integration", "federation"));
    for (const p of UPSTREAM_PROTOCOLS) expect(tests.some((f) => f.includes(p) && f.endsWith(".test.ts")), `a test of ${p}`).toBe(true);
  },
};

describe("docs/architecture.md, Adding an upstream protocol", () => {
  it("lists exactly the places that the checks here cover", () => {
    const named = new Set([...steps.matchAll(/`((?:lib|db|components|tests)\/[\w./<>[\]-]+\/(?:[\w.<>-]+\.tsx?)?)`/g)].map((m) => m[1]));
    // The list also names where the test servers are and this test itself.
    for (const other of ["tests/helpers/federation/", "tests/docs/adding-a-protocol.test.ts"]) named.delete(other);
    expect([...named].sort()).toEqual(Object.keys(FILES).sort());
    expect(section).toContain("`tests/docs/adding-a-protocol.test.ts`");
  });

  for (const [file, check] of Object.entries(FILES)) it(`${file}: holds every protocol`, check);
});
