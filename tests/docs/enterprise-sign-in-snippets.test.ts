/**
 * docs/enterprise-sign-in.md, as written: its workspace file imports as it says (with the secrets
 * its environment references name), the redirect URI and TXT record it tells administrators to
 * publish are the ones the service uses, and the commands it shows exist.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { and, asc, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { enterpriseConnections, organizationDomains, roles, socialProviders } from "../../db/schema";
import { USAGE } from "../../lib/cli/commands";
import { TXT_RECORD_LABEL, TXT_RECORD_PREFIX, txtRecordFor } from "../../lib/federation/domains";
import { CALLBACK_PATH } from "../../lib/federation/round-trip";
import { exportWorkspace } from "../../lib/workspaces/file";
import { createHarness, type Harness } from "../helpers/harness";
import { seedWithSecrets } from "../helpers/federation/setup";

const root = path.resolve(import.meta.dirname, "..", "..");
const guide = readFileSync(path.join(root, "docs", "enterprise-sign-in.md"), "utf8");
const blocks = (lang: string) => [...guide.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((m) => m[1]!);

let h: Harness;
const file = JSON.parse(blocks("json").find((b) => b.includes('"social_providers"'))!) as { id: string };

beforeAll(async () => {
  h = await createHarness();
});

describe("docs/enterprise-sign-in.md", () => {
  it("its workspace file imports as the guide says: buttons in order, the domain verified, the connection with its default role; secrets only where given", async () => {
    // The guide's workspace id, made unique to this run (the PostgreSQL database is shared by the run's files).
    const id = `${file.id}-${Date.now().toString(36)}`;
    await seedWithSecrets(h, { ...file, id }, { GOOGLE_CLIENT_SECRET: "google-secret", GLOBEX_OKTA_SECRET: "okta-secret" });
    const providers = await h.service.db.select().from(socialProviders).where(eq(socialProviders.workspaceId, id)).orderBy(asc(socialProviders.position));
    expect(providers.map((p) => [p.key, p.secretEncrypted !== null])).toEqual([
      ["google", true],
      ["github", false],
    ]);
    const [domain] = await h.service.db.select().from(organizationDomains).where(eq(organizationDomains.workspaceId, id));
    expect(domain).toMatchObject({ domain: "globex.example", verificationMethod: "operator" });
    const [connection] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.workspaceId, id));
    const [member] = await h.service.db.select().from(roles).where(and(eq(roles.workspaceId, id), eq(roles.name, "member")));
    expect(connection).toMatchObject({ name: "Globex Okta", kind: "oidc", trustUpstreamMfa: true, defaultRoleIds: [member.id] });
    expect(connection.secretEncrypted).not.toBeNull();
    const exported = await exportWorkspace(h.service.db, id);
    expect(JSON.stringify(exported)).not.toContain("okta-secret");
    expect(exported?.applications.find((a) => a.client_id === "my-app")?.social_providers).toEqual(["google", "github"]);
  });

  it("names the redirect URI the service registers upstream", () => {
    expect(guide).toContain(`<PUBLIC_URL>/t/<workspace>${CALLBACK_PATH}`);
  });

  it("shows the TXT record the console checks", () => {
    const record = txtRecordFor({ domain: "example.com", verificationToken: "TOKEN" });
    expect(record.name).toBe(`${TXT_RECORD_LABEL}.example.com`);
    expect(record.value).toBe(`${TXT_RECORD_PREFIX}TOKEN`);
    expect(guide).toContain(`${TXT_RECORD_LABEL}.example.com.  TXT  "${TXT_RECORD_PREFIX}<token shown in the console>"`);
  });

  it("uses only commands the CLI has", () => {
    const commands = blocks("sh").flatMap((b) => [...b.matchAll(/npx latchkey ([a-z]+ [a-z]+)/g)].map((m) => m[1]!));
    expect(commands.length).toBeGreaterThanOrEqual(3);
    for (const command of commands) expect(USAGE).toContain(`  ${command} `);
  });
});
