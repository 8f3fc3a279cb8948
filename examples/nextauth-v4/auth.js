// auth.js
const issuer = process.env.LATCHKEY_ISSUER; // <PUBLIC_URL>/t/<workspace-id>
const clientId = process.env.LATCHKEY_CLIENT_ID;
const clientSecret = process.env.LATCHKEY_CLIENT_SECRET;
// HTTP Basic only: Latchkey refuses a client secret in the body.
const basic = `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`)}`;

let discovery;
/** Latchkey's endpoints, from its discovery document (read again after a failure). */
function endpoints() {
  discovery ??= fetch(`${issuer}/.well-known/openid-configuration`)
    .then((answer) => (answer.ok ? answer.json() : Promise.reject(new Error(`discovery: HTTP ${answer.status}`))))
    .catch((error) => {
      discovery = undefined;
      throw error;
    });
  return discovery;
}
async function post(endpoint, params) {
  return fetch((await endpoints())[endpoint], { method: "POST", headers: { Authorization: basic }, body: new URLSearchParams(params) });
}
async function sessionCheck(accessToken) {
  // 200 while the token and its whole authority chain (grant, session, user, client) are current.
  const answer = await fetch(`${issuer}/oidc/session`, { headers: { Authorization: `Bearer ${accessToken}` } });
  return answer.status;
}

/** Hosted logout: exactly these two parameters. It ends the hosted session and every grant of it. */
export async function hostedLogoutUrl() {
  const params = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: `${process.env.NEXTAUTH_URL}/signed-out` });
  return `${(await endpoints()).end_session_endpoint}?${params}`;
}

/** What the buttons ask for, done where the tokens are: in the session's encrypted cookie, on the server. */
async function run(command, token) {
  if (command === "check") {
    const status = await sessionCheck(token.accessToken);
    return { ...token, status: status === 200 ? "Session active" : `Session ended (HTTP ${status})` };
  }
  if (command === "refresh") {
    const answer = await post("token_endpoint", { grant_type: "refresh_token", refresh_token: token.refreshToken });
    // invalid_grant: the grant ended (signed out, revoked, expired). Sign in again.
    if (!answer.ok) return { disconnected: `Refresh refused (HTTP ${answer.status}): sign in again` };
    const tokens = await answer.json();
    // Rotation: the refresh token is single use; keep the new one.
    return { ...token, accessToken: tokens.access_token, refreshToken: tokens.refresh_token, status: "Tokens refreshed" };
  }
  if (command === "disconnect") {
    // Revocation of the refresh token ends the grant and its access tokens (not the hosted session).
    await post("revocation_endpoint", { token: token.refreshToken, token_type_hint: "refresh_token" });
    // The session keeps only the outcome: no tokens, no user.
    return { disconnected: `Session check after revocation: HTTP ${await sessionCheck(token.accessToken)}` };
  }
  return token;
}

export const authOptions = {
  providers: [
    {
      id: "latchkey",
      name: "Latchkey",
      type: "oauth",
      wellKnown: `${issuer}/.well-known/openid-configuration`,
      clientId,
      clientSecret,
      // All three, sent and checked on the callback: Latchkey requires each on every sign-in.
      checks: ["pkce", "state", "nonce"],
      // openid-client 5 expects RS256 ID tokens unless told: Latchkey signs with ES256.
      client: { id_token_signed_response_alg: "ES256" },
      authorization: { params: { scope: "openid email profile offline_access" } },
      profile: (claims) => ({ id: claims.sub, email: claims.email, name: claims.name }),
    },
  ],
  callbacks: {
    async jwt({ token, account, trigger, session }) {
      if (account) return { ...token, accessToken: account.access_token, refreshToken: account.refresh_token, status: "Signed in" };
      // update()'s data comes from the browser: only a command is read from it.
      if (trigger === "update" && token.accessToken) return run(session?.command, token);
      return token;
    },
    // What the page shows. The tokens stay out: the browser reads this at /api/auth/session.
    session({ session, token }) {
      return { ...session, status: token.status, disconnected: token.disconnected };
    },
  },
};
