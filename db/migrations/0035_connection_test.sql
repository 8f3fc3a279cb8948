ALTER TABLE "federation_transactions" ALTER COLUMN "transaction_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "federation_transactions" ADD COLUMN "purpose" text DEFAULT 'sign_in' NOT NULL;--> statement-breakpoint
ALTER TABLE "federation_transactions" ADD COLUMN "tester" jsonb;--> statement-breakpoint
ALTER TABLE "federation_transactions" ADD COLUMN "browser_binding_hash" text;