/**
 * Workspace logos: raster images only, recognised by their first bytes (the declared type and the
 * file name are not trusted). SVG is refused: it can carry script. Served from the workspace's own
 * issuer path, never from elsewhere.
 */
import { createHash } from "node:crypto";
import { CodedError } from "../coded-error";

export const LOGO_MAX_BYTES = 200 * 1024;
export const LOGO_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"] as const;
export type LogoType = (typeof LOGO_TYPES)[number];

/** A logo that cannot be used, beside the form's logo field. */
export class LogoError extends CodedError<"invalid_logo"> {
  constructor(message: string) {
    super("invalid_logo", message, { field: "logo" });
    this.name = "LogoError";
  }
}

const startsWith = (bytes: Uint8Array, signature: number[], offset = 0) => signature.every((b, i) => bytes[offset + i] === b);

/** The image type the bytes are, or null for anything else (SVG, HTML, PDF, …). */
export function sniffLogoType(bytes: Uint8Array): LogoType | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return "image/gif";
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return "image/webp";
  return null;
}

export interface Logo {
  contentType: LogoType;
  bytes: Buffer;
  /** SHA-256 of the bytes, hex: the logo's address, so a changed logo is a new URL. */
  digest: string;
}

/** Checks an uploaded logo: not empty, at most 200 KB, and a PNG, JPEG, WebP or GIF by its content. */
export function checkLogo(bytes: Uint8Array): Logo {
  if (bytes.length === 0) throw new LogoError("The file is empty");
  if (bytes.length > LOGO_MAX_BYTES) throw new LogoError(`The logo is ${Math.ceil(bytes.length / 1024)} KB; the limit is 200 KB`);
  const contentType = sniffLogoType(bytes);
  if (!contentType) throw new LogoError("Use a PNG, JPEG, WebP or GIF image (SVG is not accepted)");
  const buffer = Buffer.from(bytes);
  return { contentType, bytes: buffer, digest: createHash("sha256").update(buffer).digest("hex") };
}

/** A `data:image/…;base64,…` URL (the workspace file's form of a logo), checked like an upload. */
export function logoFromDataUrl(url: string): Logo {
  const match = /^data:([a-z0-9.+/-]+);base64,([A-Za-z0-9+/=\s]*)$/i.exec(url);
  if (!match) throw new LogoError("must be a data URL of the form data:image/png;base64,…");
  const bytes = Buffer.from(match[2].replace(/\s+/g, ""), "base64");
  // The declared type is not trusted: the content decides (and must be an accepted image).
  return checkLogo(bytes);
}

export function logoDataUrl(logo: { contentType: string; bytes: Buffer }): string {
  return `data:${logo.contentType};base64,${logo.bytes.toString("base64")}`;
}

/** The route table's path of the logos under an issuer (./routes.ts). */
export const LOGO_PATH = "/branding/logo";

/** The logo's path under an issuer: `/t/<workspace>/branding/logo/<digest>`. */
export function logoPath(workspaceId: string, digest: string): string {
  return `/t/${workspaceId}${LOGO_PATH}/${digest}`;
}
