// The error every change of the authorization model throws: an unknown entity or a bad argument.

export type AuthzModelErrorCode = "not_found" | "invalid_argument";

export class AuthzModelError extends Error {
  constructor(
    readonly code: AuthzModelErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "AuthzModelError";
  }
}

export const notFound = (what: string) => new AuthzModelError("not_found", `${what} not found`);
