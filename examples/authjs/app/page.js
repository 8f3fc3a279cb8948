// app/page.js
import { redirect } from "next/navigation";
import { auth, hostedLogoutUrl, signOut, unstable_update } from "../auth.js";

async function command(form) {
  "use server";
  await unstable_update({ command: String(form.get("command")) });
  // auth() reads the request's cookie: render "/" again with the updated one.
  redirect("/");
}

async function logout() {
  "use server";
  await signOut({ redirect: false });
  redirect(await hostedLogoutUrl());
}

export default async function Home() {
  const session = await auth();
  if (!session) {
    return (
      <>
        <h1>Signed out</h1>
        <a href="/login">Sign in</a>
      </>
    );
  }
  if (session.disconnected) {
    return (
      <>
        <h1>Disconnected</h1>
        <p id="status">{session.disconnected}</p>
        <a href="/login">Sign in</a>
      </>
    );
  }
  return (
    <>
      <h1>Signed in as {session.user.email}</h1>
      <p id="status">{session.status}</p>
      <form action={command}>
        <button name="command" value="check">Check session</button>
        <button name="command" value="refresh">Refresh tokens</button>
        <button name="command" value="disconnect">Disconnect</button>
      </form>
      <form action={logout}>
        <button>Sign out</button>
      </form>
    </>
  );
}
