import Link from "next/link";

/**
 * The issuers a workspace answers as besides the one shown (lib/console/issuers.ts: the default
 * host and the other addresses a feature gives it), linking to the page where they are managed
 * (below `base`). Each is a separate issuer: an application uses the one its users sign in at.
 */
export function OtherIssuers({ issuers: { others, page }, base }: { issuers: { others: string[]; page: { path: string; label: string } | null }; base: string }) {
  if (others.length === 0 || !page) return null;
  return (
    <div className="text-xs text-slate-600" data-testid="other-issuers">
      <p>
        Also answers as a separate issuer at each of its other addresses (
        <Link prefetch={false} className="text-indigo-700 underline" href={`${base}${page.path}`}>
          {page.label}
        </Link>
        ):
      </p>
      <ul className="mt-1 space-y-0.5">
        {others.map((i) => (
          <li key={i} className="break-all font-mono">
            {i}
          </li>
        ))}
      </ul>
    </div>
  );
}
