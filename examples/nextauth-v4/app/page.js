// app/page.js
import { getServerSession } from "next-auth";
import { authOptions, hostedLogoutUrl } from "../auth.js";
import { Account } from "./account.js";

export default async function Home() {
  const session = await getServerSession(authOptions);
  if (!session) {
    return (
      <>
        <h1>Signed out</h1>
        <a href="/login">Sign in</a>
      </>
    );
  }
  return <Account logoutUrl={await hostedLogoutUrl()} />;
}
