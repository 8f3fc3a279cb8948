// The `api_grants` section: the grant schema and its references to applications and APIs (one grant per pair).
import { z } from "zod";
import type { ApiRefs } from "./apis";
import { asString, entries, type CrossCheck } from "../../surfaces/workspace-file/checks";
import { audience, clientId, permissionList } from "./fields";

export const apiGrantSchema = z.strictObject({
  client_id: clientId,
  audience,
  permissions: permissionList.default([]),
});

export function checkApiGrants(c: CrossCheck, apps: Map<string, Record<string, unknown>>, { audienceRef, permissionsOnApi }: ApiRefs): void {
  const { add } = c;
  const grantKeys = new Map<string, number>();
  for (const [i, grant] of entries(c.doc, "api_grants")) {
    const cid = asString(grant.client_id);
    if (cid !== undefined && !apps.has(cid)) add(["api_grants", i, "client_id"], `unknown client_id ${JSON.stringify(cid)} (not in applications)`);
    const aud = audienceRef(grant.audience, ["api_grants", i, "audience"]);
    if (cid !== undefined && aud !== undefined) {
      const key = JSON.stringify([cid, aud]);
      const first = grantKeys.get(key);
      if (first !== undefined) add(["api_grants", i], `duplicate grant of ${JSON.stringify(aud)} to ${JSON.stringify(cid)} (also at $.api_grants[${first}])`);
      else grantKeys.set(key, i);
    }
    permissionsOnApi(aud, grant.permissions, ["api_grants", i, "permissions"]);
  }
}
