// app/signed-out/page.js
export default function SignedOut() {
  return (
    <>
      <h1>Signed out</h1>
      <a href="/login">Sign in again</a>
    </>
  );
}
