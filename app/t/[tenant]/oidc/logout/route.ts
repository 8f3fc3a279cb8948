import { bind } from "@/lib/http/next-adapter";

export const dynamic = "force-dynamic";
export const GET = bind("GET", "/oidc/logout");
