import { consoleSignOut } from "@/lib/console/auth-routes";

export const dynamic = "force-dynamic";
export const POST = consoleSignOut;
