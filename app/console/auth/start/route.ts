import { consoleSignInStart } from "@/lib/console/auth-routes";

export const dynamic = "force-dynamic";
export const GET = consoleSignInStart;
