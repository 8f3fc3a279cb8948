import { notFoundResponse } from "@/lib/oauth/errors";

export const dynamic = "force-dynamic";

// Anything under an issuer that is not a route answers exactly like an unknown workspace or client.
const notFound = async () => notFoundResponse();
export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
