// Reading and writing a workspace's branding and logo, and serving the logo.
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { workspaceLogos, workspaces } from "../../db/schema";
import { logoPath, type Logo } from "./logo";
import { resolveBranding, type Branding } from "./rule";

export interface HostedBranding extends Branding {
  workspaceId: string;
  /** The logo's address under the workspace's issuer, or null without a logo. */
  logoUrl: string | null;
}

/** The branding of a workspace (null when there is no such workspace or it is the operator workspace). */
export async function loadBranding(db: Database, workspaceId: string): Promise<HostedBranding | null> {
  const [row] = await db
    .select({ name: workspaces.name, system: workspaces.system, branding: workspaces.branding, digest: workspaceLogos.digest })
    .from(workspaces)
    .leftJoin(workspaceLogos, eq(workspaceLogos.workspaceId, workspaces.id))
    .where(eq(workspaces.id, workspaceId))
    .limit(1);
  if (!row || row.system) return null;
  return { ...resolveBranding(row.branding, row.name), workspaceId, logoUrl: row.digest ? logoPath(workspaceId, row.digest) : null };
}

export async function readLogo(db: Database, workspaceId: string): Promise<{ contentType: string; bytes: Buffer; digest: string } | null> {
  const [row] = await db.select().from(workspaceLogos).where(eq(workspaceLogos.workspaceId, workspaceId)).limit(1);
  return row ? { contentType: row.contentType, bytes: Buffer.from(row.data, "base64"), digest: row.digest } : null;
}

/** Stores `logo` as the workspace's logo; false when it already was. */
export async function writeLogo(db: Database, workspaceId: string, logo: Logo, now: Date): Promise<boolean> {
  const [current] = await db.select({ digest: workspaceLogos.digest }).from(workspaceLogos).where(eq(workspaceLogos.workspaceId, workspaceId)).limit(1);
  if (current?.digest === logo.digest) return false;
  const values = { contentType: logo.contentType, data: logo.bytes.toString("base64"), digest: logo.digest, updatedAt: now };
  await db
    .insert(workspaceLogos)
    .values({ workspaceId, ...values })
    .onConflictDoUpdate({ target: workspaceLogos.workspaceId, set: values });
  return true;
}

/** Removes the workspace's logo; false when it had none. */
export async function deleteLogo(db: Database, workspaceId: string): Promise<boolean> {
  const removed = await db.delete(workspaceLogos).where(eq(workspaceLogos.workspaceId, workspaceId)).returning({ digest: workspaceLogos.digest });
  return removed.length > 0;
}

const LOGO_HEADERS = {
  // The address changes with the content (it is the digest), so the answer never changes.
  "Cache-Control": "public, max-age=31536000, immutable",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; sandbox",
  "Cross-Origin-Resource-Policy": "same-origin",
};

const notFound = () => new Response("Not found", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" } });

/** `GET /t/<workspace>/branding/logo/<digest>`: the logo, or 404 when there is none or the digest is not the current one. */
export async function logoResponse(db: Database, workspaceId: string, digest: string, method = "GET"): Promise<Response> {
  if (!/^[0-9a-f]{64}$/.test(digest)) return notFound();
  const [row] = await db
    .select({ contentType: workspaceLogos.contentType, data: workspaceLogos.data, system: workspaces.system })
    .from(workspaceLogos)
    .innerJoin(workspaces, eq(workspaces.id, workspaceLogos.workspaceId))
    .where(and(eq(workspaceLogos.workspaceId, workspaceId), eq(workspaceLogos.digest, digest)))
    .limit(1);
  if (!row || row.system) return notFound();
  const bytes = Buffer.from(row.data, "base64");
  return new Response(method === "HEAD" ? null : new Uint8Array(bytes), {
    status: 200,
    headers: { ...LOGO_HEADERS, "Content-Type": row.contentType, "Content-Length": String(bytes.length), ETag: `"${digest}"` },
  });
}
