import { routesBelow } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
// The portal's verification by each method (the route table's paths below /account/verify); any
// other path below it answers as an unknown path does.
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routesBelow("/account/verify");
