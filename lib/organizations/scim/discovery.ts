/**
 * SCIM's discovery documents (RFC 7644 §4): `/ServiceProviderConfig`, `/ResourceTypes` and
 * `/Schemas`, saying what this service supports (PATCH, filters up to MAX_COUNT results, ETags;
 * no bulk, sorting or password changes) and the attributes of its two resource types.
 */
import { ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, LIST_SCHEMA, USER_SCHEMA } from "./attributes";
import { notFound, scimJson } from "./errors";
import { MAX_COUNT, type ScimCall } from "./resources";

const SPC_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
const RESOURCE_TYPE_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
const SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema";

export function serviceProviderConfig(call: ScimCall): Response {
  return scimJson({
    schemas: [SPC_SCHEMA],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      { type: "oauthbearertoken", name: "Bearer token", description: "The organization's SCIM token, in the Authorization header: Bearer <token>", primary: true },
    ],
    meta: { resourceType: "ServiceProviderConfig", location: `${call.base}/ServiceProviderConfig` },
  });
}

function resourceTypes(call: ScimCall) {
  return [
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: "User",
      name: "User",
      endpoint: "/Users",
      description: "A person of the organization",
      schema: USER_SCHEMA,
      schemaExtensions: [{ schema: ENTERPRISE_USER_SCHEMA, required: false }],
      meta: { resourceType: "ResourceType", location: `${call.base}/ResourceTypes/User` },
    },
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: "Group",
      name: "Group",
      endpoint: "/Groups",
      description: "A group of the organization's people; the organization maps groups to roles",
      schema: GROUP_SCHEMA,
      meta: { resourceType: "ResourceType", location: `${call.base}/ResourceTypes/Group` },
    },
  ];
}

type Attribute = Record<string, unknown>;

const attr = (name: string, more: Partial<Attribute> = {}): Attribute => ({
  name,
  type: "string",
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: "readWrite",
  returned: "default",
  uniqueness: "none",
  ...more,
});

const multi = (name: string, subs: Attribute[]): Attribute => attr(name, { type: "complex", multiValued: true, subAttributes: subs });
const typed = (value: Attribute = attr("value")) => [value, attr("display"), attr("type"), attr("primary", { type: "boolean" })];

const USER_ATTRIBUTES: Attribute[] = [
  attr("userName", { required: true, uniqueness: "server" }),
  attr("name", {
    type: "complex",
    subAttributes: ["formatted", "familyName", "givenName", "middleName", "honorificPrefix", "honorificSuffix"].map((n) => attr(n)),
  }),
  ...["displayName", "nickName", "profileUrl", "title", "userType", "preferredLanguage", "locale", "timezone"].map((n) => attr(n)),
  attr("active", { type: "boolean" }),
  attr("password", { mutability: "writeOnly", returned: "never", description: "Never taken: provisioned users sign in through the organization's connection" }),
  multi("emails", typed()),
  multi("phoneNumbers", typed()),
  multi("ims", typed()),
  multi("photos", typed(attr("value", { type: "reference", referenceTypes: ["external"] }))),
  multi("addresses", [...["formatted", "streetAddress", "locality", "region", "postalCode", "country"].map((n) => attr(n)), attr("type"), attr("primary", { type: "boolean" })]),
  multi("groups", [attr("value", { mutability: "readOnly" }), attr("display", { mutability: "readOnly" })]),
  multi("entitlements", typed()),
  multi("roles", typed()),
  multi("x509Certificates", typed(attr("value", { type: "binary" }))),
];

const GROUP_ATTRIBUTES: Attribute[] = [
  attr("displayName", { required: true, uniqueness: "server" }),
  multi("members", [attr("value", { mutability: "immutable" }), attr("display", { mutability: "readOnly" }), attr("$ref", { type: "reference", referenceTypes: ["User"], mutability: "immutable" })]),
];

const ENTERPRISE_ATTRIBUTES: Attribute[] = [
  ...["employeeNumber", "costCenter", "organization", "division", "department"].map((n) => attr(n)),
  attr("manager", { type: "complex", subAttributes: [attr("value"), attr("$ref", { type: "reference", referenceTypes: ["User"] }), attr("displayName", { mutability: "readOnly" })] }),
];

function schemas(call: ScimCall) {
  const schema = (id: string, name: string, attributes: Attribute[]) => ({
    schemas: [SCHEMA_SCHEMA],
    id,
    name,
    attributes,
    meta: { resourceType: "Schema", location: `${call.base}/Schemas/${id}` },
  });
  return [schema(USER_SCHEMA, "User", USER_ATTRIBUTES), schema(ENTERPRISE_USER_SCHEMA, "EnterpriseUser", ENTERPRISE_ATTRIBUTES), schema(GROUP_SCHEMA, "Group", GROUP_ATTRIBUTES)];
}

const list = (resources: unknown[]) => scimJson({ schemas: [LIST_SCHEMA], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources });

/** `/ResourceTypes` and `/ResourceTypes/{id}`. */
export function resourceTypesAnswer(call: ScimCall, id: string | null): Response {
  const all = resourceTypes(call);
  if (id === null) return list(all);
  const one = all.find((t) => t.id === id);
  if (!one) throw notFound(`No resource type ${id}`);
  return scimJson(one);
}

/** `/Schemas` and `/Schemas/{urn}`. */
export function schemasAnswer(call: ScimCall, id: string | null): Response {
  const all = schemas(call);
  if (id === null) return list(all);
  const one = all.find((s) => s.id.toLowerCase() === id.toLowerCase());
  if (!one) throw notFound(`No schema ${id}`);
  return scimJson(one);
}
