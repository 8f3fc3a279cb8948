// Sign-in for a single-page app with oidc-client-ts, configured for Latchkey.
import { InMemoryWebStorage, UserManager, WebStorageStateStore } from "oidc-client-ts";
import { createRemoteJWKSet, jwtVerify } from "jose";

/** `issuer` is pinned configuration, `clientId` a PUBLIC application that allows `appOrigin`. */
export function createLatchkeyClient({ issuer, clientId, appOrigin }) {
  const settings = {
    authority: issuer,
    // With client_id, discovery's scope metadata is this application's.
    metadataUrl: `${issuer}/.well-known/openid-configuration?client_id=${encodeURIComponent(clientId)}`,
    client_id: clientId,
    redirect_uri: `${appOrigin}/callback`,
    post_logout_redirect_uri: `${appOrigin}/signed-out`,
    scope: "openid email profile",
    loadUserInfo: true, // UserInfo after sign-in; the library requires its sub to equal the ID token's
    // Tokens in memory only; the sign-in transaction (PKCE verifier, nonce) in this tab's storage.
    userStore: new WebStorageStateStore({ store: new InMemoryWebStorage() }),
    stateStore: new WebStorageStateStore({ store: window.sessionStorage }),
    // Never revoke before hosted logout: it needs the live grant (this is the default).
    revokeTokensOnSignout: false,
  };
  const userManager = new UserManager(settings);
  const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));

  return {
    userManager,

    /** Latchkey requires a nonce; oidc-client-ts sends one only when given. */
    signIn: () => userManager.signinRedirect({ nonce: randomBase64url(32) }),

    /** On /callback: check `iss`, let the library exchange the code, then verify the ID token. */
    async completeSignIn() {
      const params = new URL(window.location.href).searchParams;
      if (params.getAll("iss").length !== 1 || params.get("iss") !== issuer) throw new Error("The callback's iss is not our issuer");
      const user = await userManager.signinRedirectCallback(); // state, PKCE, nonce, UserInfo sub
      try {
        // The library neither checks the signature nor iss, aud and exp.
        await jwtVerify(user.id_token, jwks, { issuer, audience: clientId, algorithms: ["ES256"], requiredClaims: ["iat", "exp", "nonce"] });
      } catch (error) {
        await userManager.removeUser();
        throw error;
      }
      return user;
    },

    /** A new token pair from the refresh token; any failure ends the local sign-in (no blind retry). */
    async refresh() {
      try {
        return await userManager.signinSilent();
      } catch (error) {
        await userManager.removeUser();
        throw error;
      }
    },

    /** Ends this sign-in's grant (both tokens). Not before signOut(): hosted logout needs the grant. */
    revoke: () => userManager.revokeTokens(),

    /** Current authority: only HTTP 200, active === true and our iss, client, sub and a future exp. */
    async checkSession() {
      const user = await userManager.getUser();
      if (!user) return { ok: false, status: null };
      const response = await fetch(`${issuer}/oidc/session`, { headers: { Authorization: `Bearer ${user.access_token}` }, cache: "no-store" });
      const body = response.status === 200 ? await response.json() : null;
      const ok =
        body?.active === true && body.iss === issuer && body.client_id === clientId && body.sub === user.profile.sub && typeof body.exp === "number" && body.exp * 1000 > Date.now();
      return { ok, status: response.status, body };
    },

    /**
     * Hosted logout takes exactly client_id and post_logout_redirect_uri. It ends the hosted
     * session and with it every grant of that session (refresh and the session check fail from
     * then on), so an app that holds its tokens in memory has nothing left to revoke afterwards.
     */
    async signOut() {
      // Without a stored user the library sends no id_token_hint; with no `state` argument, no state.
      await userManager.removeUser();
      await userManager.signoutRedirect();
    },

    /** On /signed-out. */
    async completeSignOut() {
      await userManager.signoutRedirectCallback();
      return {};
    },
  };
}

function randomBase64url(bytes) {
  const random = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...random)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
