// app/account.js
"use client";
import { SessionProvider, signOut, useSession } from "next-auth/react";

export function Account({ logoutUrl }) {
  return (
    <SessionProvider>
      <Buttons logoutUrl={logoutUrl} />
    </SessionProvider>
  );
}

function Buttons({ logoutUrl }) {
  // update() runs the jwt callback on the server, where the tokens are.
  const { data: session, update } = useSession();
  // The buttons need this script: they appear once it has read the session.
  if (session === undefined) return <p>Loading…</p>;
  if (session === null) return <a href="/login">Sign in</a>;
  if (session.disconnected) {
    return (
      <>
        <h1>Disconnected</h1>
        <p id="status">{session.disconnected}</p>
        <a href="/login">Sign in</a>
      </>
    );
  }
  const logout = async () => {
    await signOut({ redirect: false });
    window.location.assign(logoutUrl);
  };
  return (
    <>
      <h1>Signed in as {session.user.email}</h1>
      <p id="status">{session.status}</p>
      <button onClick={() => update({ command: "check" })}>Check session</button>
      <button onClick={() => update({ command: "refresh" })}>Refresh tokens</button>
      <button onClick={logout}>Sign out</button>
      <button onClick={() => update({ command: "disconnect" })}>Disconnect</button>
    </>
  );
}
