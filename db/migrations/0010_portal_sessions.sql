ALTER TABLE "account_security_portal_sessions" ADD COLUMN "grant_id" text;--> statement-breakpoint
ALTER TABLE "account_security_portal_sessions" ADD COLUMN "return_uri" text NOT NULL;--> statement-breakpoint
ALTER TABLE "account_security_portal_sessions" ADD COLUMN "evidence" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "account_security_portal_sessions" ADD CONSTRAINT "account_security_portal_sessions_grant_id_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "public"."grants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_security_portal_sessions_source_idx" ON "account_security_portal_sessions" USING btree ("session_id");