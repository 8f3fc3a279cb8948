ALTER TABLE "users" ADD COLUMN "password_unproven" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "operator_invitations" ADD COLUMN "proof_hash" text;--> statement-breakpoint
ALTER TABLE "operator_invitations" ADD COLUMN "proven_at" timestamp with time zone;--> statement-breakpoint
-- Operator accounts made by the earlier invitation flow got a password from whoever held the link,
-- not necessarily the owner of the mailbox. Every operator account with a password except the first
-- (made by setup, whose link only the installation holds) is marked: its password is refused until
-- the mailbox is proven, and then discarded.
UPDATE "users" SET "password_unproven" = true
WHERE "workspace_id" = 'system' AND "password_hash" IS NOT NULL
  AND "id" <> (SELECT "id" FROM "users" WHERE "workspace_id" = 'system' ORDER BY "created_at", "id" LIMIT 1);--> statement-breakpoint
-- Their console sessions end: a session opened with such a password is no proof of the mailbox.
UPDATE "console_sessions" SET "ended_at" = now(), "end_reason" = 'mailbox_unproven'
WHERE "ended_at" IS NULL
  AND "operator_user_id" IN (SELECT "id" FROM "users" WHERE "workspace_id" = 'system' AND "password_unproven");
--> statement-breakpoint
UPDATE "hosted_sessions" SET "ended_at" = now(), "end_reason" = 'mailbox_unproven'
WHERE "ended_at" IS NULL AND "workspace_id" = 'system'
  AND "user_id" IN (SELECT "id" FROM "users" WHERE "workspace_id" = 'system' AND "password_unproven");
