ALTER TABLE "authorization_transactions" ADD COLUMN "purpose" text DEFAULT 'authorize' NOT NULL;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "return_to" text;