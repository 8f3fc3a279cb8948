// The `apis` section: the API schema, unique permissions per API, and the references other sections make to APIs.
import { z } from "zod";
import { asArray, asString, entries, type CrossCheck } from "../../surfaces/workspace-file/checks";
import { audience, displayName, identityScopeSet, permissionList } from "./fields";
import type { PathSegment } from "../../surfaces/workspace-file/paths";

export const apiSchema = z.strictObject({
  audience,
  name: displayName,
  active: z.boolean().default(true),
  permissions: permissionList.default([]),
});

/** How grants and roles refer to APIs, checked against the document's `apis`. */
export interface ApiRefs {
  /** Checks that each permission of `list` is defined on the API of `aud`, if that API is known. */
  permissionsOnApi(aud: string | undefined, list: unknown, path: PathSegment[]): void;
  /** Reports an audience not in `apis`; returns the audience when it is a string. */
  audienceRef(value: unknown, path: PathSegment[]): string | undefined;
}

export function checkApis(c: CrossCheck): ApiRefs {
  const { add, uniqueStrings } = c;
  const apis = c.index("apis", "audience");
  for (const [i, api] of entries(c.doc, "apis")) uniqueStrings(api.permissions, ["apis", i, "permissions"], "permission");
  const permissionsOnApi = (aud: string | undefined, list: unknown, path: PathSegment[]) => {
    uniqueStrings(list, path, "permission");
    const api = aud === undefined ? undefined : apis.get(aud);
    if (!api || !Array.isArray(api.permissions)) return;
    const defined = new Set(api.permissions.filter((p): p is string => typeof p === "string"));
    asArray(list).forEach((p, k) => {
      if (typeof p === "string" && !defined.has(p) && !identityScopeSet.has(p)) {
        add([...path, k], `permission ${JSON.stringify(p)} is not defined on API ${JSON.stringify(aud)}`);
      }
    });
  };
  const audienceRef = (value: unknown, path: PathSegment[]): string | undefined => {
    const aud = asString(value);
    if (aud !== undefined && !apis.has(aud)) add(path, `unknown audience ${JSON.stringify(aud)} (not in apis)`);
    return aud;
  };
  return { permissionsOnApi, audienceRef };
}
