import { consoleSignInCallback } from "@/lib/console/auth-routes";
import { methodsOf } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methodsOf({ GET: consoleSignInCallback });
