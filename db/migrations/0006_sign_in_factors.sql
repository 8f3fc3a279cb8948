CREATE TABLE "factor_challenges" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"kind" text NOT NULL,
	"purpose" text NOT NULL,
	"binding_id" text NOT NULL,
	"user_id" text,
	"address" text,
	"secret" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"consumed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "mail_outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"recipient" text NOT NULL,
	"subject_encrypted" text NOT NULL,
	"text_encrypted" text NOT NULL,
	"html_encrypted" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "auth_policy" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "auth_policy" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "user_id" text;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "evidence" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "session_id" text;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "recovery_codes_encrypted" text;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "passkey_offer_answered" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "totp_factors" ADD COLUMN "last_used_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webauthn_credentials" ADD COLUMN "backed_up" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "webauthn_credentials" ADD COLUMN "flagged_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "factor_challenges" ADD CONSTRAINT "factor_challenges_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "factor_challenges" ADD CONSTRAINT "factor_challenges_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mail_outbox" ADD CONSTRAINT "mail_outbox_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "factor_challenges_binding_idx" ON "factor_challenges" USING btree ("workspace_id","purpose","binding_id");--> statement-breakpoint
CREATE INDEX "factor_challenges_expiry_idx" ON "factor_challenges" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "mail_outbox_workspace_idx" ON "mail_outbox" USING btree ("workspace_id","created_at");--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD CONSTRAINT "authorization_transactions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD CONSTRAINT "authorization_transactions_session_id_hosted_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."hosted_sessions"("id") ON DELETE cascade ON UPDATE no action;