/**
 * The one shape of a hosted page's form post (the sign-in steps, the account-security portal):
 * declared guard same-origin (lib/http/guards.ts), then an `application/x-www-form-urlencoded`
 * body of at most 8 KiB, each refusal a hosted error page. The handler gets the parsed form and
 * checks what binds it (its pending sign-in or portal session, and the CSRF token bound to it).
 */
import type { EndpointContext } from "../http/context";
import { mediaType, readBody } from "../http/form";
import { guarded, sameOrigin } from "../http/guards";
import { hostedError } from "./errors";

/** 8 KiB: the largest hosted form, a WebAuthn registration with an RSA key, is under 3 KiB. */
export const HOSTED_FORM_LIMIT = 8 * 1024;

export function hostedFormPost<C extends EndpointContext>(handler: (request: Request, ctx: C, form: URLSearchParams) => Promise<Response>) {
  return guarded<C>(
    async (request, ctx) => {
      if (mediaType(request) !== "application/x-www-form-urlencoded") return hostedError("form_media_type");
      let form: URLSearchParams;
      try {
        form = new URLSearchParams(await readBody(request, HOSTED_FORM_LIMIT));
      } catch {
        return hostedError("form_too_large");
      }
      return handler(request, ctx, form);
    },
    { use: [sameOrigin(() => hostedError("cross_site_form"))] },
  );
}
