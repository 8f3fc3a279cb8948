// JSON paths of problems (`$.applications[1].redirect_uris[0]`) and their order as in the document.

export type PathSegment = PropertyKey;

export function jsonPath(segments: readonly PathSegment[]): string {
  let out = "$";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "string" && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

/** Orders paths as they appear in the document: array indexes numerically. */
export function comparePaths(a: string, b: string): number {
  const split = (p: string) => p.split(/(\d+)/).map((s, i) => (i % 2 ? Number(s) : s));
  const pa = split(a);
  const pb = split(b);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] === pb[i]) continue;
    if (typeof pa[i] === "number" && typeof pb[i] === "number") return (pa[i] as number) - (pb[i] as number);
    return String(pa[i]) < String(pb[i]) ? -1 : 1;
  }
  return pa.length - pb.length;
}
