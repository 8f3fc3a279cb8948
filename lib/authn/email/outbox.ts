/**
 * The development outbox: where email goes when no SMTP server is configured (the embedded
 * default). Each message is kept (bodies encrypted under the master key: they carry one-time
 * codes), printed to stdout by the sender where MAIL_OUTBOX_PRINT allows, and listed in the
 * console; never dropped.
 */
import { and, desc, eq } from "drizzle-orm";
import { mailOutbox } from "../../../db/schema";
import { decryptSecret, encryptSecret, newId } from "../../crypto";
import type { EndpointContext } from "../../http/context";

type Ctx = Pick<EndpointContext, "service" | "workspace">;

const PURPOSE = "mail-outbox";

export interface OutboxMessage {
  id: string;
  recipient: string;
  subject: string;
  text: string;
  html: string;
  createdAt: Date;
}

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export async function storeInOutbox(ctx: Ctx, message: MailMessage): Promise<OutboxMessage> {
  const key = ctx.service.config.masterKey;
  const row = {
    id: newId(),
    workspaceId: ctx.workspace.id,
    recipient: message.to,
    subject: encryptSecret(key, message.subject, PURPOSE),
    text: encryptSecret(key, message.text, PURPOSE),
    html: encryptSecret(key, message.html, PURPOSE),
    createdAt: ctx.service.clock.now(),
  };
  await ctx.service.db.insert(mailOutbox).values(row);
  return { id: row.id, recipient: message.to, subject: message.subject, text: message.text, html: message.html, createdAt: row.createdAt };
}

/** The workspace's outbox, newest first; `recipient` filters to one address. */
export async function listOutbox(ctx: Ctx, options: { limit?: number; recipient?: string } = {}): Promise<OutboxMessage[]> {
  const key = ctx.service.config.masterKey;
  const rows = await ctx.service.db
    .select()
    .from(mailOutbox)
    .where(and(eq(mailOutbox.workspaceId, ctx.workspace.id), options.recipient ? eq(mailOutbox.recipient, options.recipient) : undefined))
    .orderBy(desc(mailOutbox.createdAt))
    .limit(options.limit ?? 50);
  return rows.map((r) => ({
    id: r.id,
    recipient: r.recipient,
    subject: decryptSecret(key, r.subject, PURPOSE),
    text: decryptSecret(key, r.text, PURPOSE),
    html: decryptSecret(key, r.html, PURPOSE),
    createdAt: r.createdAt,
  }));
}
