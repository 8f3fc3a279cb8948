ALTER TABLE "account_security_launches" ADD COLUMN "callback_state" text NOT NULL;--> statement-breakpoint
ALTER TABLE "account_security_launches" ADD COLUMN "browser_session_id" text;--> statement-breakpoint
ALTER TABLE "account_security_launches" ADD COLUMN "approved_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "account_security_launches" ADD COLUMN "redeemed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "account_security_launches" ADD CONSTRAINT "account_security_launches_browser_session_id_hosted_sessions_id_fk" FOREIGN KEY ("browser_session_id") REFERENCES "public"."hosted_sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "account_security_launches_state_uq" ON "account_security_launches" USING btree ("workspace_id","client_pk","state_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "account_security_launches_completion_uq" ON "account_security_launches" USING btree ("workspace_id","completion_hash");