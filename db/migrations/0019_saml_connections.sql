CREATE TABLE "saml_assertion_replays" (
	"workspace_id" text NOT NULL,
	"connection_id" text NOT NULL,
	"assertion_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "saml_assertion_replays_connection_id_assertion_id_pk" PRIMARY KEY("connection_id","assertion_id")
);
--> statement-breakpoint
ALTER TABLE "federation_transactions" ALTER COLUMN "nonce" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "federation_transactions" ALTER COLUMN "code_verifier_encrypted" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "enterprise_connections" ADD COLUMN "last_success_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "enterprise_connections" ADD COLUMN "last_failure_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "enterprise_connections" ADD COLUMN "last_failure" text;--> statement-breakpoint
ALTER TABLE "federated_identities" ADD COLUMN "upstream_acr" text;--> statement-breakpoint
ALTER TABLE "federation_transactions" ADD COLUMN "request_id" text;--> statement-breakpoint
ALTER TABLE "federation_transactions" ADD COLUMN "answer" jsonb;--> statement-breakpoint
ALTER TABLE "federation_transactions" ADD COLUMN "answered_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "saml_assertion_replays" ADD CONSTRAINT "saml_assertion_replays_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saml_assertion_replays" ADD CONSTRAINT "saml_assertion_replays_connection_id_enterprise_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."enterprise_connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "saml_assertion_replays_expiry_idx" ON "saml_assertion_replays" USING btree ("expires_at");--> statement-breakpoint
-- SAML connections stored before SAML sign-in existed hold only a metadata URL: they stay off until an administrator completes them.
UPDATE "enterprise_connections" SET "active" = false WHERE "kind" = 'saml' AND NOT ("config" ? 'idp_entity_id');
