import type { ReactNode } from "react";

/** A stored connection as its protocol's parts see it. */
export interface ConnectionView {
  id: string;
  config: Record<string, unknown>;
  hasSecret: boolean;
}

/**
 * A connection protocol's parts of the console's organization page (lib/federation/protocols):
 * each renders only its own protocol's settings, and a connection's form shows only its
 * protocol's parts.
 */
export interface ConnectionParts {
  /** Once above the connections: what to register at any identity provider of this protocol. */
  Setup?: (props: { issuer: string }) => ReactNode;
  /** Beside a connection's name: what needs attention. */
  Badges: (props: { connection: ConnectionView }) => ReactNode;
  /** Above a connection's form: what to give its identity provider. */
  Details?: (props: { connection: ConnectionView; issuer: string }) => ReactNode;
  /** The form's fields of this protocol in the form's first grid (`connection` absent for a new one). */
  Fields?: (props: { connection?: ConnectionView }) => ReactNode;
  /**
   * The form's section of this protocol, after the options every protocol shares. For a new
   * connection (`connection` absent), `newConnectionId` is the id it is saved under.
   */
  Section?: (props: { connection?: ConnectionView; issuer: string; newConnectionId: string }) => ReactNode;
}

export const str = (v: unknown) => (typeof v === "string" ? v : "");
