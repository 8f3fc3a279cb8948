/**
 * The development outbox in the console: the mail the service would have sent had an SMTP server
 * been configured (lib/authn/email/outbox.ts). Its messages carry one-time sign-in codes, so only
 * administrators (who could set the user's password anyway) read it; a viewer cannot use it to
 * sign in as someone.
 */
import { listOutbox, type OutboxMessage } from "../authn/email/outbox";
import { mailSettings, type MailSettings } from "../config";
import type { Service } from "../service";
import { assertRole, type WorkspaceAccess } from "./authz";

export type { OutboxMessage };

export const OUTBOX_PAGE_SIZE = 100;

export interface OutboxView {
  /**
   * How mail goes out now: `outbox` (no SMTP_URL: kept here), `smtp` (the outbox only holds what
   * was stored before), `unavailable` (no SMTP_URL on an https PUBLIC_URL: email methods are off).
   */
  transport: MailSettings["transport"];
  messages: OutboxMessage[];
}

/** The workspace's outbox, newest first, for an administrator (viewers are refused: the codes would let them sign in as users). */
export async function workspaceOutbox(service: Service, access: WorkspaceAccess, options: { recipient?: string } = {}): Promise<OutboxView> {
  assertRole(access, "admin");
  const recipient = options.recipient?.trim() || undefined;
  const messages = await listOutbox({ service, workspace: access.workspace }, { limit: OUTBOX_PAGE_SIZE, ...(recipient ? { recipient } : {}) });
  return { transport: mailSettings(service.config).transport, messages };
}
