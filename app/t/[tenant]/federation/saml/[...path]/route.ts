import { routesBelow } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
// A SAML connection's ACS and SP metadata (lib/sign-in/steps/federation.ts).
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routesBelow("/federation/saml");
