/**
 * An upstream connection protocol (an organization's enterprise connection: OpenID Connect, SAML
 * 2.0) is one folder behind this contract, and every surface reads the registry (./index.ts
 * `CONNECTION_PROTOCOLS`) by the connection's `kind` (the workspace file's `protocol`): the
 * console's connection form and its save, the workspace file's entry (schema, checks, export,
 * import), the CLI's secret command, and the protocol's own routes. Nothing outside the folder
 * names a protocol.
 *
 * The surfaces give the protocol their field types (the console's form fields, the workspace
 * file's URL and secret reference), so a protocol declares its settings once in each surface's
 * own words without importing the surface.
 */
import type { Retention } from "../../surfaces/retention";
import type { z } from "zod";
import type { Database } from "../../../db/client";
import type { enterpriseConnections } from "../../../db/schema";
import type { Route } from "../../http/route";
import type { Service } from "../../service";

/** The protocols an enterprise connection may use (enterprise_connections.kind). */
export type ConnectionKind = (typeof enterpriseConnections.$inferSelect)["kind"];
export type ConnectionRow = typeof enterpriseConnections.$inferSelect;

/** The console's form field types (lib/console/forms.ts), given to the protocol. */
export interface ConsoleFieldTypes {
  optionalText: (max?: number) => z.ZodType<string | undefined>;
  checkbox: () => z.ZodType<boolean>;
  /** An upstream URL (https, http on loopback), optional. */
  optionalUpstreamUrl: z.ZodType<string | undefined>;
}

/** The workspace file's field types (lib/workspaces/document), given to the protocol. */
export interface FileFieldTypes {
  /** An upstream URL (https, http on loopback). */
  upstreamUrl: z.ZodType<string>;
  /** `{ "env": NAME }`: a secret the import reads from the environment. */
  secretReference: z.ZodType<{ env: string }>;
}

/** What a save in the console knows of the connection before it: its row, when it exists. */
export interface PreviousConnection {
  kind: ConnectionKind;
  config: Record<string, unknown>;
  secretEncrypted: string | null;
}

/** The protocol's part of a connection save in the console. */
export interface ConsoleSettings {
  config: Record<string, unknown>;
  /** The sealed secret to store; null clears it; undefined keeps the stored one. */
  secretEncrypted: string | null | undefined;
  /** What the audit event records of the settings (no secrets, no certificates in full). */
  auditConfig: Record<string, unknown>;
  secretChanged: boolean;
  /** Further keys of the audit event (the protocol's own, declared in the audit catalogue). */
  auditData?: Record<string, unknown>;
}

/** What a protocol's prefill answers. */
export type ConsolePrefill = { values: Record<string, string>; message: string } | { errors: Record<string, string> };

/** The protocol's part of importing one connection entry: its settings, or a problem at a path inside the entry. */
export type FileSettings =
  | {
      config: Record<string, unknown>;
      /** The sealed secret to store; undefined keeps the stored one (or none for a new connection). */
      secretEncrypted: string | undefined;
      /** The stored secret changes even when nothing else does. */
      secretChanged: boolean;
    }
  | { problem: { path: (string | number)[]; message: string } };

/** What the route table gives a protocol's routes: its generic 404 (lib/oauth/errors.ts). */
export interface ProtocolRouteDeps {
  notFound: () => Response;
}

/** What the workspace import gives a protocol's import. */
export interface FileImportDeps {
  masterKey: Buffer;
  /** The secret references' values, by environment variable name (read before the transaction). */
  secrets: Map<string, string>;
  now: Date;
  /** The secret sealed under the master key, or undefined when `stored` already holds it (or no secret is given). */
  sealedIfChanged(stored: string | null, secret: string | undefined, purpose: string): string | undefined;
}

export interface ConnectionProtocol<Form = any, Entry = any> {
  kind: ConnectionKind;
  /** The protocol's name as the console shows it ("OpenID Connect", "SAML 2.0"). */
  label: string;
  /** A connection of this protocol in a sentence: "an OIDC connection". */
  noun: string;
  /**
   * Why a connection of this protocol admits verified domains only (who a first sign-in admits,
   * lib/federation/providers.ts), or undefined when it may admit anyone it vouches for.
   */
  verifiedDomainsOnly?: string;
  /** Whether the connection's secret is an upstream client secret an operator sets (the CLI's `connection secret`). */
  clientSecret: boolean;
  /** The protocol's short-lived rows (a replay store), run by the one purger (lib/features/purge.ts). */
  retention?: readonly Retention[];

  console: {
    /** The connection form's fields of this protocol (merged into the save's input). */
    fields(f: ConsoleFieldTypes): z.ZodRawShape;
    /**
     * Fills in fields before the connection is saved, from something the administrator gave (SAML:
     * the identity provider's metadata, pasted or at its URL): the fields' new values and what to
     * tell the administrator, or the problems by field.
     */
    prefill?(ctx: { service: Service }, input: Form): Promise<ConsolePrefill>;
    /** Checks of the form's fields, recorded by field name beside the others (the database is the save's transaction). */
    check(ctx: { db: Database; workspaceId: string }, input: Form, errors: Record<string, string>): Promise<void>;
    /** The settings to store; throws ConsoleInputError for a field it cannot use. */
    settings(
      ctx: { service: Service; now: Date; connectionId: string },
      input: Form,
      previous: PreviousConnection | null,
    ): Promise<ConsoleSettings>;
  };

  file: {
    /** The connection entry's fields of this protocol (merged into the entry's schema). */
    fields(f: FileFieldTypes): z.ZodRawShape;
    /** The fields of the entry that belong to this protocol (any other protocol's field in an entry of this one is refused). */
    own: readonly string[];
    /** Rules of an entry of this protocol, beyond its fields' own. */
    check(entry: Entry, issue: (path: string, message: string) => void): void;
    /** Checks against the rest of the file (raw document): `applications` by client id. */
    crossCheck?(entry: Record<string, unknown>, refs: { applications: Map<string, Record<string, unknown>> }, add: (path: (string | number)[], message: string) => void): void;
    /** The secret references of an entry, with their path inside it (read before the import's transaction). */
    secretReferences(entry: Entry): Array<{ path: (string | number)[]; env: string }>;
    /** The entry's fields of this protocol for a stored connection, or null when its settings are incomplete (left out of the export). */
    export(config: Record<string, unknown>): Record<string, unknown> | null;
    /** The settings to store for an entry; `row` is the stored connection of this name (same protocol), if any. */
    import(deps: FileImportDeps, connectionId: string, entry: Entry, row: ConnectionRow | null): Promise<FileSettings>;
    /** After the import wrote a connection of this protocol (created or changed): its own audit events (the import's transaction). */
    imported?(tx: Database, event: { workspaceId: string; actor: string | null; organizationSlug: string; connectionId: string; name: string; row: ConnectionRow | null; config: Record<string, unknown>; now: Date }): Promise<void>;
  };

  /** The protocol's own routes under the issuer (SAML's ACS and SP metadata). */
  routes?: (deps: ProtocolRouteDeps) => readonly Route[];
}

export const defineConnectionProtocol = <Form, Entry>(p: ConnectionProtocol<Form, Entry>): ConnectionProtocol<Form, Entry> => p;
