import Link from "next/link";
import { buttonClass } from "@/components/ui/button";

export default function ConsoleNotFound() {
  return (
    <main id="content" className="mx-auto max-w-xl px-4 py-16 text-center">
      <p className="text-sm font-semibold text-indigo-700">404</p>
      <h1 className="mt-2 text-2xl font-semibold tracking-tight text-slate-900">Not found</h1>
      <p className="mt-2 text-sm text-slate-600">There is nothing here, or it is not part of a workspace you administer.</p>
      <Link href="/console" prefetch={false} className={`${buttonClass("secondary")} mt-6`}>
        Your workspaces
      </Link>
    </main>
  );
}
