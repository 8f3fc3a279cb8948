ALTER TABLE "authorization_transactions" ADD COLUMN "sign_up_address" text;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "sign_up_with_passkey" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "factor_challenges_address_idx" ON "factor_challenges" USING btree ("workspace_id","address","created_at");