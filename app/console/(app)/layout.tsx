import { TopBar } from "@/components/console/top-bar";
import { layoutOperator } from "../_lib/session";

export const dynamic = "force-dynamic";

export default async function ConsoleAppLayout({ children }: { children: React.ReactNode }) {
  const operator = await layoutOperator();
  return (
    <>
      <a href="#content" className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:text-sm">
        Skip to content
      </a>
      {operator ? <TopBar operator={operator} /> : null}
      {children}
    </>
  );
}
