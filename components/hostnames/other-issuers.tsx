import Link from "next/link";

/**
 * The issuers a workspace answers as besides the one shown (the default host and its other
 * verified hostnames). Each is a separate issuer: an application uses the one its users sign in at.
 */
export function OtherIssuers({ issuers, hostnamesHref }: { issuers: string[]; hostnamesHref: string }) {
  if (issuers.length === 0) return null;
  return (
    <div className="text-xs text-slate-600" data-testid="other-issuers">
      <p>
        Also answers as a separate issuer at each of its other addresses (
        <Link prefetch={false} className="text-indigo-700 underline" href={hostnamesHref}>
          Hostnames
        </Link>
        ):
      </p>
      <ul className="mt-1 space-y-0.5">
        {issuers.map((i) => (
          <li key={i} className="break-all font-mono">
            {i}
          </li>
        ))}
      </ul>
    </div>
  );
}
