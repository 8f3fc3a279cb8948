import { routesBelow } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
// Every sign-in step's form post (the route table's paths below /sign-in); any other path below it
// answers as an unknown path does. The sign-in page itself is /sign-in (../page.tsx).
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routesBelow("/sign-in");
