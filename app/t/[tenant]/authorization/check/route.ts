import { bind } from "@/lib/http/next-adapter";

export const dynamic = "force-dynamic";
export const POST = bind("POST", "/authorization/check");
