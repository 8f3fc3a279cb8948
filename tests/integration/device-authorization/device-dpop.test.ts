/**
 * The device grant's tokens are sender-constrained like the code exchange's (lib/oauth/human-grant.ts
 * carries the DPoP key): a poll with a proof gets a DPoP-bound access token and, for the public
 * client, a refresh family bound to the key.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { Holder, learnNonce } from "../dpop/proofs";
import { DEVICE_CODE_GRANT_TYPE } from "../../../lib/oauth/device-authorization/grant";
import { deviceWorkspace, SPA, startDevice, userDecides } from "./device-helpers";

let h: Harness;
const ws = uniqueWorkspaceId("device-dpop");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, deviceWorkspace(ws));
});

describe("the device grant with a DPoP proof", () => {
  it("issues a DPoP-bound access token, refused as Bearer, and a refresh family only the key can rotate", async () => {
    const holder = await Holder.create();
    const grant = await startDevice(h, ws);
    await userDecides(h, ws, grant.user_code, "approve");
    const nonce = await learnNonce(h, ws, holder);
    const res = await call(h, `/t/${ws}/oauth2/token`, {
      form: { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: grant.device_code, client_id: SPA.client_id },
      headers: { dpop: await holder.proof(h, ws, "/oauth2/token", { nonce }) },
    });
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as { token_type: string; access_token: string; refresh_token: string };
    expect(tokens.token_type).toBe("DPoP");

    const asBearer = await call(h, `/t/${ws}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(asBearer.status).toBe(401);
    const withProof = await call(h, `/t/${ws}/oidc/userinfo`, {
      headers: { authorization: `DPoP ${tokens.access_token}`, dpop: await holder.proof(h, ws, "/oidc/userinfo", { htm: "GET", accessToken: tokens.access_token }) },
    });
    expect(withProof.status).toBe(200);

    const thief = await Holder.create();
    const stolen = await call(h, `/t/${ws}/oauth2/token`, {
      form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: SPA.client_id },
      headers: { dpop: await thief.proof(h, ws, "/oauth2/token", { nonce: await learnNonce(h, ws, thief) }) },
    });
    expect(stolen.status).toBe(400);
    expect(((await stolen.json()) as { error: string }).error).toBe("invalid_grant");
    const rotated = await call(h, `/t/${ws}/oauth2/token`, {
      form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: SPA.client_id },
      headers: { dpop: await holder.proof(h, ws, "/oauth2/token", { nonce }) },
    });
    expect(rotated.status).toBe(200);
    expect(((await rotated.json()) as { token_type: string }).token_type).toBe("DPoP");
  });
});
