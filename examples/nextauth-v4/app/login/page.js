// app/login/page.js
"use client";
import { signIn } from "next-auth/react";
import { useEffect, useRef } from "react";

export default function Login() {
  const started = useRef(false);
  useEffect(() => {
    // NextAuth v4 starts a sign-in with a POST carrying its CSRF token, which signIn() sends. Once:
    // a second start would replace the first one's state, nonce and PKCE cookies.
    if (started.current) return;
    started.current = true;
    signIn("latchkey", { callbackUrl: "/" });
  }, []);
  return <p>Signing in…</p>;
}
