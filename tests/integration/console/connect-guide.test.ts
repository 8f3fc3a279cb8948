/**
 * The console's "Connect your application" snippet (components/console/connect-guide.tsx): it asks
 * for the scopes the application registered, and a server-side sign-in makes its state and nonce
 * once, into values the code keeps for the callback, as docs/integration.md does.
 */
import { describe, expect, it } from "vitest";
import { connectSnippet } from "../../../components/console/connect-guide";

const base = { clientId: "billing-web", issuer: "https://auth.example.test/t/acme", redirectUri: "https://app.example.test/callback", api: null };

describe("the connect snippet", () => {
  it("a server-side application: the registered scopes, offline_access included; state and nonce made once and kept for the callback", () => {
    const { code } = connectSnippet({ ...base, type: "WEB_CONFIDENTIAL", scopes: ["openid", "email", "profile", "offline_access"] });
    expect(code).toContain('scope: "openid email profile offline_access"');
    expect(code).toContain("const state = client.randomState();");
    expect(code).toContain("const nonce = client.randomNonce();");
    expect(code).toMatch(/^ {2}state,$/m);
    expect(code).toMatch(/^ {2}nonce,$/m);
    // Not made inline, where nothing could keep them for the callback's comparison.
    expect(code).not.toMatch(/state: client\.randomState\(\)|nonce: client\.randomNonce\(\)/);
    expect(code).toContain("expectedState: state, expectedNonce: nonce");
  });

  it("a browser application asks for the scopes it registered", () => {
    expect(connectSnippet({ ...base, type: "PUBLIC", scopes: ["openid", "profile"] }).code).toContain('scope: "openid profile"');
  });
});
