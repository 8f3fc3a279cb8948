import { routesBelow } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
// The admin portal's form posts (the setup link's code and start, signing out: the route table's
// paths below /organization-admin); any other path below it answers as an unknown path does. The
// portal page itself is /organization-admin (../page.tsx).
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routesBelow("/organization-admin");
