// The error every change of the authorization model throws: an unknown entity or a bad argument.
import { CodedError } from "../../coded-error";

export type AuthzModelErrorCode = "not_found" | "invalid_argument";

export class AuthzModelError extends CodedError<AuthzModelErrorCode> {
  constructor(
    readonly code: AuthzModelErrorCode,
    message: string,
  ) {
    super(code, message, { status: code === "not_found" ? 404 : 400 });
    this.name = "AuthzModelError";
  }
}

export const notFound = (what: string) => new AuthzModelError("not_found", `${what} not found`);
