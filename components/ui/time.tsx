import { countOf } from "@/lib/i18n/plural";

/** Times in UTC, the same on server and client, with a relative hint for humans. */
export function formatUtc(date: Date | string | null | undefined): string {
  if (!date) return "—";
  const d = typeof date === "string" ? new Date(date) : date;
  return d.toISOString().replace("T", " ").slice(0, 16) + " UTC";
}

export function relative(date: Date, now: Date): string {
  const ms = date.getTime() - now.getTime();
  const abs = Math.abs(ms);
  const units: [number, string][] = [
    [86_400_000, "day"],
    [3_600_000, "hour"],
    [60_000, "minute"],
  ];
  for (const [size, name] of units) {
    if (abs >= size) {
      const n = Math.floor(abs / size);
      const text = countOf(n, name, `${name}s`);
      return ms >= 0 ? `in ${text}` : `${text} ago`;
    }
  }
  return ms >= 0 ? "in under a minute" : "just now";
}

export function Time({ value, now, relativeOnly = false }: { value: Date | null | undefined; now?: Date; relativeOnly?: boolean }) {
  if (!value) return <span className="text-slate-500">—</span>;
  const rel = now ? relative(value, now) : null;
  return (
    <time dateTime={value.toISOString()} title={formatUtc(value)} className="whitespace-nowrap">
      {relativeOnly && rel ? rel : formatUtc(value)}
      {!relativeOnly && rel ? <span className="ml-1 text-xs text-slate-500">({rel})</span> : null}
    </time>
  );
}
