import type { ReactNode } from "react";
import { CopyButton } from "@/components/ui/copy-button";
import type { ClientType } from "@/db/schema/applications";

export interface ConnectGuideProps {
  type: ClientType;
  clientId: string;
  issuer: string;
  /** The first registered redirect URI, for the snippet (interactive kinds). */
  redirectUri: string | null;
  /** An API this application may call and its granted permissions (machine-to-machine). */
  api: { audience: string; permissions: string[] } | null;
  /** The identity scopes the application registered (interactive kinds): the snippet asks for them, `offline_access` included. */
  scopes: string[];
}

/** The code a developer starts from for this kind of application; the same calls as docs/integration.md. */
export function connectSnippet({ type, clientId, issuer, redirectUri, api, scopes }: ConnectGuideProps): { language: string; title: string; code: string } {
  const local = issuer.startsWith("http://localhost");
  const scope = (scopes.length ? scopes : ["openid"]).join(" ");
  if (type === "M2M") {
    return {
      language: "sh",
      title: "Get an access token with client credentials (curl)",
      code: [
        `curl -sS ${issuer}/oauth2/token \\`,
        `  -u "${clientId}:$CLIENT_SECRET" \\`,
        `  -d grant_type=client_credentials \\`,
        `  --data-urlencode resource=${api?.audience ?? "<your API's audience>"} \\`,
        `  --data-urlencode "scope=${api?.permissions.length ? api.permissions.join(" ") : "<permissions granted to this application>"}"`,
      ].join("\n"),
    };
  }
  if (type === "PUBLIC") {
    return {
      language: "js",
      title: "Sign users in from the browser: authorization code with PKCE (oidc-client-ts)",
      code: [
        `import { UserManager } from "oidc-client-ts";`,
        ``,
        `const userManager = new UserManager({`,
        `  authority: "${issuer}",`,
        `  metadataUrl: "${issuer}/.well-known/openid-configuration?client_id=${encodeURIComponent(clientId)}",`,
        `  client_id: "${clientId}",`,
        `  redirect_uri: "${redirectUri ?? "<your redirect URI>"}",`,
        `  scope: "${scope}",`,
        `  loadUserInfo: true,`,
        `});`,
        ``,
        `// Latchkey requires a nonce; oidc-client-ts sends one only when given.`,
        `await userManager.signinRedirect({ nonce: crypto.randomUUID() });`,
        `// On your redirect URI: const user = await userManager.signinRedirectCallback();`,
      ].join("\n"),
    };
  }
  return {
    language: "ts",
    title: "Sign users in from your server (openid-client)",
    code: [
      `import * as client from "openid-client";`,
      ``,
      `const config = await client.discovery(`,
      `  new URL("${issuer}"),`,
      `  "${clientId}",`,
      `  { id_token_signed_response_alg: "ES256" },`,
      `  client.ClientSecretBasic(process.env.LATCHKEY_CLIENT_SECRET!),`,
      local
        ? `  // allowInsecureRequests: only because this Latchkey serves http://localhost. Never in production.\n  { execute: [client.enableNonRepudiationChecks, client.allowInsecureRequests] },`
        : `  { execute: [client.enableNonRepudiationChecks] },`,
      `);`,
      ``,
      `// Start sign-in: new values for each sign-in, kept server-side in this browser's session.`,
      `const state = client.randomState();`,
      `const nonce = client.randomNonce();`,
      `const codeVerifier = client.randomPKCECodeVerifier();`,
      `const url = client.buildAuthorizationUrl(config, {`,
      `  redirect_uri: "${redirectUri ?? "<your redirect URI>"}",`,
      `  scope: "${scope}",`,
      `  state,`,
      `  nonce,`,
      `  code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),`,
      `  code_challenge_method: "S256",`,
      `});`,
      `// Save { state, nonce, codeVerifier } in the session, then redirect the browser to url. On your`,
      `// redirect URI: client.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: codeVerifier,`,
      `//   expectedState: state, expectedNonce: nonce, idTokenExpected: true }).`,
    ].join("\n"),
  };
}

function Row({ label, value, children }: { label: string; value: string; children?: ReactNode }) {
  return (
    <>
      <dt className="text-sm text-slate-600">{label}</dt>
      <dd className="flex min-w-0 flex-wrap items-center gap-2">
        <code className="min-w-0 break-all font-mono text-sm text-slate-900">{value}</code>
        <CopyButton value={value} label={`Copy ${label.toLowerCase()}`} />
        {children}
      </dd>
    </>
  );
}

/** Next steps on an application's page: issuer, discovery URL and a snippet for its kind. */
export function ConnectGuide(props: ConnectGuideProps) {
  const snippet = connectSnippet(props);
  const discovery = `${props.issuer}/.well-known/openid-configuration`;
  return (
    <div className="space-y-4">
      <dl className="grid gap-x-4 gap-y-2 sm:grid-cols-[10rem_1fr]">
        <Row label="Issuer" value={props.issuer} />
        <Row label="Discovery URL" value={discovery} />
      </dl>
      <div>
        <div className="flex flex-wrap items-center justify-between gap-2">
          <h3 className="text-sm font-semibold text-slate-900">{snippet.title}</h3>
          <CopyButton value={snippet.code} label="Copy code" />
        </div>
        <pre data-testid="connect-snippet" className="mt-2 overflow-x-auto rounded-md bg-slate-900 p-3 text-xs leading-relaxed text-slate-100">
          <code>{snippet.code}</code>
        </pre>
        <p className="mt-2 text-xs text-slate-600">
          {props.type === "M2M"
            ? "Grant this application an API and its permissions under API access below; the token is sent as Authorization: Bearer to your API, which asks the permission check."
            : props.type === "PUBLIC"
              ? "The browser calls the token endpoint from your app's origin: list it under Allowed browser origins. The integration guide (docs/integration.md) has the complete module, with ID token verification, refresh and sign-out."
              : "The integration guide (docs/integration.md) has the complete start, callback, refresh and sign-out code, and what to check at each step."}
        </p>
      </div>
    </div>
  );
}
