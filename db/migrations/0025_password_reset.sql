ALTER TABLE "authorization_transactions" ADD COLUMN "password_change" text;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "new_password_hash" text;--> statement-breakpoint
ALTER TABLE "password_policies" ADD COLUMN "reset" text DEFAULT 'off' NOT NULL;