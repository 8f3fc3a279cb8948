"use client";

import { useEffect } from "react";

/**
 * A full-page navigation to `href` (not a client-side one): the console's sign-in starts in a
 * route handler and crosses to the authorization server, which Next's router cannot fetch as a
 * React payload.
 */
export function AutoNavigate({ href }: { href: string }) {
  useEffect(() => {
    window.location.replace(href);
  }, [href]);
  return null;
}
