import { Badge } from "@/components/ui/badge";
import { formatUtc } from "@/components/ui/time";

/** Unverified, or Verified (by DNS | by operator) with when. */
export function DomainStatus({ verifiedAt, method }: { verifiedAt: Date | null; method: "dns" | "operator" | null }) {
  if (!verifiedAt) return <Badge tone="amber">Unverified</Badge>;
  return (
    <span className="inline-flex flex-wrap items-center gap-1.5">
      <Badge tone="green">Verified</Badge>
      <span className="text-xs text-slate-600">
        {method === "operator" ? "by operator" : "by DNS"}, <time dateTime={verifiedAt.toISOString()}>{formatUtc(verifiedAt)}</time>
      </span>
    </span>
  );
}
