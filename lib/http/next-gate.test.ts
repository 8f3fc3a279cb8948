import { describe, expect, it } from "vitest";
import { gateForNext } from "./next-gate";

const internal = () => ({ "next-action": "abc", rsc: "1", "next-router-state-tree": "%5B%5D", cookie: "a=b" });

describe("what Next sees under an issuer", () => {
  it("keeps the server action and navigation headers of the admin portal's page only", () => {
    const portal = internal();
    expect(gateForNext("POST", "/t/demo/organization-admin", portal)).toBeNull();
    expect(portal).toEqual(internal());

    for (const path of ["/t/demo/sign-in", "/t/demo/organization-admin/code", "/t/demo/organization-admin/x", "/t/demo/account", "/t/demo/oauth2/token"]) {
      const headers = internal();
      gateForNext("GET", path, headers);
      expect(headers, path).toEqual({ cookie: "a=b" });
    }
  });
});
