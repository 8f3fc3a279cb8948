/**
 * The import rules of the codebase, checked by `npm run lint` (and so by `npm test` and CI).
 * docs/architecture.md holds the same table and a picture drawn from the imports. LAYERS allows
 * exactly the folder-to-folder arrows some import uses (tests/docs/architecture.test.ts):
 * `node scripts/architecture.mjs` prints what differs, `--write` brings LAYERS, the table and the
 * picture in line with the imports (an arrow pointing up, or a new folder, it leaves to you).
 *
 * - lib/ is framework-free: no next, react or react-dom, nothing from app/ or components/.
 * - components/ renders; it imports nothing from lib/console (the console's rules) or app/.
 * - The folders of lib/ form a DAG, bottom to top as listed in LAYERS: each folder may import its
 *   own files, the kernel and the folders named beside it, and nothing else. No import cycles
 *   between folders or between modules.
 */

/** Files every part of lib/ may use: plain values and the database schema. */
const KERNEL = ["^db/", "^lib/clock\\.ts$", "^lib/crypto\\.ts$", "^lib/config\\.ts$", "^lib/coded-error\\.ts$", "^lib/text\\.ts$", "^lib/user-agent\\.ts$", "^lib/uris\\.ts$", "^lib/i18n/"];

/** Each lib/ folder and what it may import besides itself and the kernel, bottom to top. */
const LAYERS = {
  // Domain signals: emitted from every layer where a rule is decided, so below them all (it imports nothing of lib/).
  "lib/signals": [],
  // Metrics: observe the signals; loaded by server.ts only (its Prometheus listener), imported by no folder of lib/.
  "lib/metrics": ["lib/signals"],
  "lib/limits": ["lib/signals"],
  "lib/outbound": [],
  "lib/service.ts": ["lib/limits", "lib/outbound", "lib/signals"],
  "lib/http": ["lib/limits", "lib/service.ts", "lib/signals"],
  "lib/audit": [],
  // The liveness of an authority chain: one SQL form and its JS twin, over the schema only.
  "lib/authority": [],
  // The contract of a feature's surfaces (console operations, retention, descriptor): types and small helpers every feature folder uses.
  "lib/surfaces": ["lib/audit", "lib/limits", "lib/service.ts", "lib/http"],
  "lib/branding": ["lib/http", "lib/surfaces"],
  "lib/hosted": ["lib/branding", "lib/http"],
  "lib/clients": ["lib/authority", "lib/audit"],
  "lib/authn": ["lib/surfaces", "lib/authority", "lib/audit", "lib/http", "lib/hosted", "lib/limits", "lib/signals"],
  // Forms' fields and answers: the zod pieces a feature's console operations read their inputs with (an email address as lib/authn reads one).
  "lib/forms": ["lib/authn", "lib/surfaces"],
  "lib/oauth": ["lib/surfaces", "lib/authority", "lib/authn", "lib/audit", "lib/hosted", "lib/http", "lib/limits", "lib/service.ts", "lib/signals"],
  "lib/authz": ["lib/oauth", "lib/audit", "lib/http"],
  "lib/federation": ["lib/surfaces", "lib/authn", "lib/audit", "lib/hosted", "lib/http", "lib/outbound", "lib/service.ts"],
  "lib/hostnames": ["lib/forms", "lib/surfaces", "lib/federation", "lib/oauth", "lib/authority", "lib/audit", "lib/http", "lib/service.ts"],
  "lib/account-security": ["lib/authn", "lib/authority", "lib/oauth", "lib/audit", "lib/hosted", "lib/http"],
  // Security alerts by email: the policy, the new-browser rule (called by the sign-in) and the delivery from the audit log.
  "lib/security-alerts": ["lib/account-security", "lib/forms", "lib/surfaces", "lib/authn", "lib/audit", "lib/http", "lib/service.ts"],
  // SCIM provisioning of an organization's people from its directory.
  "lib/organizations/scim": ["lib/forms", "lib/surfaces", "lib/federation", "lib/authn", "lib/audit", "lib/http", "lib/limits", "lib/service.ts"],
  // Testing an organization's enterprise connection: a round trip that signs no one in (nested in lib/federation, above it).
  "lib/federation/connection-test": ["lib/federation", "lib/forms", "lib/surfaces", "lib/audit", "lib/branding", "lib/hosted", "lib/http", "lib/service.ts"],
  "lib/sign-in": ["lib/federation/connection-test", "lib/organizations/scim", "lib/security-alerts", "lib/federation", "lib/authn", "lib/oauth", "lib/audit", "lib/hosted", "lib/http", "lib/signals", "lib/service.ts"],
  // Operator accounts, their memberships and invitations: run by the console, used by the command line.
  "lib/operators": ["lib/surfaces", "lib/forms", "lib/authn", "lib/audit", "lib/http", "lib/service.ts"],
  // Organizations' own features (member invitations, their administrators): above federation (home-realm discovery), below the registry.
  "lib/organizations/invitations": ["lib/surfaces", "lib/audit", "lib/authn", "lib/federation", "lib/hosted", "lib/http", "lib/limits", "lib/service.ts", "lib/forms"],
  // An organization's admin portal for the customer's IT: setup links, its sessions, the console operations it runs (by name) scoped to its organization.
  "lib/organizations/admin-portal": ["lib/organizations/invitations", "lib/surfaces", "lib/audit", "lib/authn", "lib/hosted", "lib/http", "lib/limits", "lib/service.ts", "lib/forms"],
  // A new workspace's checklist, and trying an application's sign-in from the console.
  "lib/getting-started": ["lib/forms", "lib/surfaces", "lib/oauth", "lib/http", "lib/service.ts"],
  // The registry of feature descriptors and the one purger of their retention: above every feature folder, below every surface that reads it.
  "lib/features": ["lib/organizations/admin-portal", "lib/federation/connection-test", "lib/organizations/scim", "lib/organizations/invitations", "lib/security-alerts", "lib/operators", "lib/getting-started", "lib/surfaces", "lib/hostnames", "lib/federation", "lib/authn", "lib/oauth", "lib/audit", "lib/limits", "lib/service.ts", "lib/http", "lib/branding"],
  "lib/workspaces": ["lib/features", "lib/surfaces", "lib/federation", "lib/authn", "lib/clients", "lib/audit", "lib/branding", "lib/service.ts"],
  "lib/server": ["lib/organizations/scim", "lib/account-security", "lib/sign-in", "lib/authz", "lib/oauth", "lib/authn", "lib/hosted", "lib/http", "lib/limits", "lib/service.ts", "lib/features", "lib/surfaces", "lib/signals"],
  "lib/console": [
    "lib/server", "lib/features", "lib/operators", "lib/workspaces", "lib/federation", "lib/authz", "lib/oauth", "lib/authn", "lib/authority", "lib/clients", "lib/surfaces",
    "lib/audit", "lib/branding", "lib/hosted", "lib/forms", "lib/http", "lib/service.ts",
  ],
  "lib/demo": ["lib/server", "lib/account-security", "lib/workspaces", "lib/hosted", "lib/http", "lib/service.ts"],
  "lib/cli": ["lib/operators", "lib/workspaces", "lib/clients", "lib/http", "lib/service.ts"],
};

const escape = (path) => path.replace(/[.]/g, "\\.");
const pathOf = (entry) => (entry.endsWith(".ts") ? `^${escape(entry)}$` : `^${escape(entry)}/`);

/** The listed folders nested in a folder (lib/federation/connection-test in lib/federation): layers of their own, outside its rule. */
const nestedIn = (folder) => Object.keys(LAYERS).filter((other) => other.startsWith(`${folder}/`));

const layerRules = Object.entries(LAYERS).map(([folder, allowed]) => ({
  name: `layer:${folder}`,
  comment: `${folder} may import only itself, the kernel${allowed.length ? ` and ${allowed.join(", ")}` : ""} (see docs/architecture.md)`,
  severity: "error",
  from: nestedIn(folder).length ? { path: pathOf(folder), pathNot: nestedIn(folder).map(pathOf) } : { path: pathOf(folder) },
  to: { path: "^lib/", pathNot: [pathOf(folder), ...KERNEL, ...allowed.map(pathOf)] },
}));

/** A lib/ file outside every listed folder would escape the table: name it there first. */
const listed = [...Object.keys(LAYERS).map(pathOf), ...KERNEL];

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: "layer:unlisted",
      comment: "Every lib/ folder is listed in LAYERS (.dependency-cruiser.cjs) and docs/architecture.md",
      severity: "error",
      from: { path: "^lib/", pathNot: listed },
      to: {},
    },
    {
      name: "no-folder-cycle",
      comment: "The folders of lib/ form a DAG",
      severity: "error",
      scope: "folder",
      from: { path: "^lib/" },
      to: { path: "^lib/", circular: true },
    },
    {
      name: "no-cycle",
      comment: "No module imports itself through others",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "lib-framework-free",
      comment: "lib/ is framework-free: Next and React belong in app/ and components/",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^node_modules/(next|react|react-dom)/" },
    },
    {
      name: "lib-not-app-or-components",
      comment: "lib/ never imports from app/ or components/",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^(app|components)/" },
    },
    {
      name: "components-not-console-rules",
      comment: "components/ renders what it is given: nothing from lib/console, nothing from app/",
      severity: "error",
      from: { path: "^components/" },
      to: { path: "^(lib/console|app)/" },
    },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    // Type-only imports count: a type cycle is still a cycle between folders.
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["\\.test\\.tsx?$", "^\\.next/"] },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
