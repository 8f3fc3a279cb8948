CREATE TABLE "operator_invitations" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"email" text NOT NULL,
	"email_normalized" text NOT NULL,
	"role" text NOT NULL,
	"token_hash" text NOT NULL,
	"invited_by" text,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"accepted_at" timestamp with time zone,
	"accepted_by" text,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
DROP INDEX "federated_identities_ws_iss_sub_uq";--> statement-breakpoint
ALTER TABLE "enterprise_connections" ADD COLUMN "admission" text DEFAULT 'verified_domains' NOT NULL;--> statement-breakpoint
ALTER TABLE "organization_members" ADD COLUMN "origin" text DEFAULT 'console' NOT NULL;--> statement-breakpoint
ALTER TABLE "federated_identities" ADD COLUMN "source" text;--> statement-breakpoint
UPDATE "federated_identities" SET "source" = CASE WHEN "connection_id" IS NOT NULL THEN 'connection:' || "connection_id" WHEN "social_provider_id" IS NOT NULL THEN 'social:' || "social_provider_id" ELSE 'removed:' || "id" END;--> statement-breakpoint
ALTER TABLE "federated_identities" ALTER COLUMN "source" SET NOT NULL;--> statement-breakpoint
UPDATE "organization_members" m SET "origin" = 'sign_in' WHERE EXISTS (SELECT 1 FROM "audit_events" a WHERE a."workspace_id" = m."workspace_id" AND a."type" = 'authz.organization.member_added' AND a."subject" = m."user_id" AND a."data"->>'organization_id' = m."organization_id" AND a."data"->>'via' = 'enterprise_connection');--> statement-breakpoint
ALTER TABLE "operator_invitations" ADD CONSTRAINT "operator_invitations_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operator_invitations" ADD CONSTRAINT "operator_invitations_invited_by_users_id_fk" FOREIGN KEY ("invited_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operator_invitations" ADD CONSTRAINT "operator_invitations_accepted_by_users_id_fk" FOREIGN KEY ("accepted_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "operator_invitations_token_uq" ON "operator_invitations" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "operator_invitations_workspace_email_idx" ON "operator_invitations" USING btree ("workspace_id","email_normalized");--> statement-breakpoint
CREATE UNIQUE INDEX "federated_identities_ws_source_iss_sub_uq" ON "federated_identities" USING btree ("workspace_id","source","issuer","subject");