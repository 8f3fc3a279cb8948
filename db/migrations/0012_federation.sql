CREATE TABLE "client_social_providers" (
	"workspace_id" text NOT NULL,
	"client_pk" text NOT NULL,
	"provider_id" text NOT NULL,
	CONSTRAINT "client_social_providers_client_pk_provider_id_pk" PRIMARY KEY("client_pk","provider_id")
);
--> statement-breakpoint
CREATE TABLE "federated_identities" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"user_id" text NOT NULL,
	"connection_id" text,
	"social_provider_id" text,
	"issuer" text NOT NULL,
	"subject" text NOT NULL,
	"email" text,
	"email_verified" boolean DEFAULT false NOT NULL,
	"name" text,
	"created_at" timestamp with time zone NOT NULL,
	"last_sign_in_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "federation_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"transaction_id" text NOT NULL,
	"connection_id" text,
	"social_provider_id" text,
	"state_hash" text NOT NULL,
	"nonce" text NOT NULL,
	"code_verifier_encrypted" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"consumed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "organization_domains" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"organization_id" text NOT NULL,
	"domain" text NOT NULL,
	"verification_token" text NOT NULL,
	"verified_at" timestamp with time zone,
	"verification_method" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "social_providers" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"key" text NOT NULL,
	"preset" text NOT NULL,
	"name" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"position" integer DEFAULT 0 NOT NULL,
	"client_id" text NOT NULL,
	"secret_encrypted" text,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "enterprise_connections" ADD COLUMN "default_role_ids" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "enterprise_connections" ADD COLUMN "trust_upstream_mfa" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "organization_id" text;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "connection_id" text;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "federated_link" jsonb;--> statement-breakpoint
ALTER TABLE "client_social_providers" ADD CONSTRAINT "client_social_providers_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_social_providers" ADD CONSTRAINT "client_social_providers_client_pk_clients_id_fk" FOREIGN KEY ("client_pk") REFERENCES "public"."clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_social_providers" ADD CONSTRAINT "client_social_providers_provider_id_social_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."social_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federated_identities" ADD CONSTRAINT "federated_identities_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federated_identities" ADD CONSTRAINT "federated_identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federated_identities" ADD CONSTRAINT "federated_identities_connection_id_enterprise_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."enterprise_connections"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federated_identities" ADD CONSTRAINT "federated_identities_social_provider_id_social_providers_id_fk" FOREIGN KEY ("social_provider_id") REFERENCES "public"."social_providers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federation_transactions" ADD CONSTRAINT "federation_transactions_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federation_transactions" ADD CONSTRAINT "federation_transactions_transaction_id_authorization_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."authorization_transactions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federation_transactions" ADD CONSTRAINT "federation_transactions_connection_id_enterprise_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."enterprise_connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federation_transactions" ADD CONSTRAINT "federation_transactions_social_provider_id_social_providers_id_fk" FOREIGN KEY ("social_provider_id") REFERENCES "public"."social_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_domains" ADD CONSTRAINT "organization_domains_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_domains" ADD CONSTRAINT "organization_domains_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "social_providers" ADD CONSTRAINT "social_providers_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "client_social_providers_ws_idx" ON "client_social_providers" USING btree ("workspace_id","client_pk");--> statement-breakpoint
CREATE UNIQUE INDEX "federated_identities_ws_iss_sub_uq" ON "federated_identities" USING btree ("workspace_id","issuer","subject");--> statement-breakpoint
CREATE INDEX "federated_identities_user_idx" ON "federated_identities" USING btree ("workspace_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "federation_transactions_state_uq" ON "federation_transactions" USING btree ("workspace_id","state_hash");--> statement-breakpoint
CREATE INDEX "federation_transactions_expiry_idx" ON "federation_transactions" USING btree ("workspace_id","expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "organization_domains_workspace_domain_uq" ON "organization_domains" USING btree ("workspace_id","domain");--> statement-breakpoint
CREATE INDEX "organization_domains_org_idx" ON "organization_domains" USING btree ("workspace_id","organization_id");--> statement-breakpoint
CREATE UNIQUE INDEX "social_providers_workspace_key_uq" ON "social_providers" USING btree ("workspace_id","key");--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD CONSTRAINT "authorization_transactions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD CONSTRAINT "authorization_transactions_connection_id_enterprise_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."enterprise_connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
INSERT INTO "organization_domains" ("id", "workspace_id", "organization_id", "domain", "verification_token", "created_at")
SELECT replace(gen_random_uuid()::text, '-', ''), c."workspace_id", c."organization_id", lower(d.domain), replace(gen_random_uuid()::text, '-', ''), now()
FROM "enterprise_connections" c, jsonb_array_elements_text(coalesce(c."config"->'domains', '[]'::jsonb)) AS d(domain)
ON CONFLICT DO NOTHING;--> statement-breakpoint
UPDATE "enterprise_connections" SET "config" = "config" - 'domains' WHERE "config" ? 'domains';
