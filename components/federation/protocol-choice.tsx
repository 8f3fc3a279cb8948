"use client";

import { useRouter } from "next/navigation";
import { useId, useSyncExternalStore } from "react";
import { buttonClass } from "@/components/ui/button";

const noSubscription = () => () => {};

/**
 * The new connection's protocol, chosen before its form (which shows that protocol's fields
 * only): a GET form whose button reloads the page with `?protocol=`; with script, choosing is
 * enough and the button goes.
 */
export function ProtocolChoice({ path, value, options }: { path: string; value: string; options: { value: string; label: string }[] }) {
  const id = useId();
  const router = useRouter();
  const scripted = useSyncExternalStore(noSubscription, () => true, () => false);
  return (
    <form method="get" action={`${path}#new-connection`} aria-label="Protocol of the new connection" className="mb-4 flex flex-wrap items-end gap-3">
      <div className="min-w-0">
        <label htmlFor={id} className="block text-sm font-medium text-slate-700">
          Protocol
        </label>
        <select
          id={id}
          name="protocol"
          defaultValue={value}
          onChange={(e) => router.replace(`${path}?protocol=${encodeURIComponent(e.target.value)}#new-connection`, { scroll: false })}
          className="mt-1 block w-full rounded-md border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-200"
        >
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      {scripted ? null : (
        <button type="submit" className={buttonClass("secondary", "md")}>
          Choose
        </button>
      )}
    </form>
  );
}
