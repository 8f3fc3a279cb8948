/**
 * The development outbox in the console: the mail the service would have sent had an SMTP server
 * been configured (lib/authn/email/outbox.ts). Its messages carry one-time sign-in codes, so only
 * administrators (who could set the user's password anyway) read it; a viewer cannot use it to
 * sign in as someone.
 */
import { listOutbox, type OutboxMessage } from "../authn/email/outbox";
import type { Service } from "../service";
import { assertRole, type WorkspaceAccess } from "./authz";

export type { OutboxMessage };

export const OUTBOX_PAGE_SIZE = 100;

export interface OutboxView {
  /** Mail goes to an SMTP server: the outbox only holds what was stored before (or nothing). */
  smtpConfigured: boolean;
  messages: OutboxMessage[];
}

/** The workspace's outbox, newest first, for an administrator (viewers are refused: the codes would let them sign in as users). */
export async function workspaceOutbox(service: Service, access: WorkspaceAccess, options: { recipient?: string } = {}): Promise<OutboxView> {
  assertRole(access, "admin");
  const recipient = options.recipient?.trim() || undefined;
  const messages = await listOutbox({ service, workspace: access.workspace }, { limit: OUTBOX_PAGE_SIZE, ...(recipient ? { recipient } : {}) });
  return { smtpConfigured: smtpConfigured(service), messages };
}

/** Whether the service sends mail through SMTP (`SMTP_URL`); read loosely so this stays true to whatever the configuration names. */
export function smtpConfigured(service: Service): boolean {
  const value = (service.config as unknown as Record<string, unknown>).smtpUrl;
  return typeof value === "string" && value.length > 0;
}
