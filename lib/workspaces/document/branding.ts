// The `branding` object: how the workspace's hosted pages look, checked by lib/branding's rule
// (the same the console uses), and the logo as a data URL or a file beside the workspace file.
import path from "node:path";
import { z } from "zod";
import { LogoError, logoDataUrl, logoFromDataUrl } from "../../branding/logo";
import { displayNameField, primaryColorField, resolveBranding, storedBranding, themeField, type StoredBranding } from "../../branding/rule";

/** `{ "data": "data:image/png;base64,…" }` or `{ "file": "logo.png" }` (relative to the workspace file). */
const logoSchema = z
  .strictObject({ data: z.string().optional(), file: z.string().optional() })
  .superRefine((logo, ctx) => {
    if ((logo.data === undefined) === (logo.file === undefined)) {
      ctx.addIssue({ code: "custom", message: 'must be { "data": "data:image/…;base64,…" } or { "file": "path relative to the workspace file" }' });
    } else if (logo.file !== undefined) {
      // The command line (latchkey workspace import) reads the file and sends the image as data.
      ctx.addIssue({ code: "custom", path: ["file"], message: "is read by the latchkey command line (relative to the workspace file); elsewhere give the image as data" });
    } else {
      try {
        logoFromDataUrl(logo.data as string);
      } catch (error) {
        if (!(error instanceof LogoError)) throw error;
        ctx.addIssue({ code: "custom", path: ["data"], message: error.message });
      }
    }
  });

export const brandingSchema = z.strictObject({
  /** Shown on the hosted pages instead of the workspace's name. */
  display_name: displayNameField.pipe(z.string().min(1, "must not be empty")).optional(),
  primary_color: primaryColorField.optional(),
  theme: themeField.optional(),
  logo: logoSchema.optional(),
});
export type BrandingEntry = z.output<typeof brandingSchema>;

/** The file's branding as stored on the workspace row (the logo is stored apart). */
export function brandingStored(entry: BrandingEntry | undefined): StoredBranding {
  return storedBranding({ displayName: entry?.display_name, primaryColor: entry?.primary_color, theme: entry?.theme });
}

/** The stored branding and logo as the file writes them; undefined when everything is the default. */
export function brandingEntry(stored: unknown, workspaceName: string, logo: { contentType: string; bytes: Buffer } | null): BrandingEntry | undefined {
  const b = resolveBranding(stored, workspaceName);
  const entry: BrandingEntry = {
    ...(b.custom.displayName ? { display_name: b.displayName } : {}),
    ...(b.custom.primaryColor ? { primary_color: b.primaryColor } : {}),
    ...(b.theme !== "auto" ? { theme: b.theme } : {}),
    ...(logo ? { logo: { data: logoDataUrl(logo) } } : {}),
  };
  return Object.keys(entry).length ? entry : undefined;
}

/**
 * For the command line, before the file leaves the user's machine: a `branding.logo.file` is read
 * relative to the workspace file and replaced by its content as a data URL (the server never
 * reads the user's files). The image is checked on import like any other. Text that is not a
 * JSON object, or has no such reference, is returned unchanged.
 */
export function inlineLogoFile(text: string, workspaceFilePath: string, read: (file: string) => Buffer): string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return text;
  }
  const branding = doc && typeof doc === "object" ? (doc as Record<string, unknown>).branding : undefined;
  const logo = branding && typeof branding === "object" ? (branding as Record<string, unknown>).logo : undefined;
  const file = logo && typeof logo === "object" ? (logo as Record<string, unknown>).file : undefined;
  if (typeof file !== "string" || file === "") return text;
  const bytes = read(path.resolve(path.dirname(workspaceFilePath), file));
  // The declared type is not trusted on import (the bytes decide), so any image type will do here.
  (branding as Record<string, unknown>).logo = { data: `data:application/octet-stream;base64,${bytes.toString("base64")}` };
  return JSON.stringify(doc);
}
