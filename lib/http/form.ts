import { BodyTooLarge } from "./errors";
import { isStorableText } from "../text";

/** Reads at most `limit` bytes; a longer body is refused (BodyTooLarge) without buffering the rest. */
export async function readBody(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new BodyTooLarge();
  if (declared !== null && /^[0-9]+$/.test(declared)) {
    // A declared length bounds what the HTTP parser lets through: read it whole (the production
    // listener already has it in memory), then check what arrived.
    const bytes = await request.arrayBuffer();
    if (bytes.byteLength > limit) throw new BodyTooLarge();
    return Buffer.from(bytes).toString("utf8");
  }
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new BodyTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function mediaType(request: Request): string {
  return (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
}

/** The first parameter, by name, whose name or value the database could not store; null when none. */
export function unstorableParameter(params: URLSearchParams): string | null {
  for (const [name, value] of params) if (!isStorableText(name) || !isStorableText(value)) return name;
  return null;
}
