CREATE TABLE "scim_directories" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"organization_id" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"connection_id" text,
	"subject_attribute" text DEFAULT 'externalId' NOT NULL,
	"local_sign_in" boolean DEFAULT false NOT NULL,
	"any_domain" boolean DEFAULT false NOT NULL,
	"group_roles" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scim_group_members" (
	"workspace_id" text NOT NULL,
	"group_id" text NOT NULL,
	"scim_user_id" text NOT NULL,
	CONSTRAINT "scim_group_members_group_id_scim_user_id_pk" PRIMARY KEY("group_id","scim_user_id")
);
--> statement-breakpoint
CREATE TABLE "scim_groups" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"directory_id" text NOT NULL,
	"display_name" text NOT NULL,
	"display_name_key" text NOT NULL,
	"external_id" text,
	"attributes" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scim_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"directory_id" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"status" integer NOT NULL,
	"detail" text
);
--> statement-breakpoint
CREATE TABLE "scim_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"directory_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "scim_users" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"directory_id" text NOT NULL,
	"user_id" text NOT NULL,
	"user_name" text NOT NULL,
	"user_name_key" text NOT NULL,
	"external_id" text,
	"display_name" text,
	"email_key" text,
	"active" boolean DEFAULT true NOT NULL,
	"managed" boolean NOT NULL,
	"attributes" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "scim_directories" ADD CONSTRAINT "scim_directories_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_directories" ADD CONSTRAINT "scim_directories_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_directories" ADD CONSTRAINT "scim_directories_connection_id_enterprise_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."enterprise_connections"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_group_members" ADD CONSTRAINT "scim_group_members_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_group_members" ADD CONSTRAINT "scim_group_members_group_id_scim_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."scim_groups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_group_members" ADD CONSTRAINT "scim_group_members_scim_user_id_scim_users_id_fk" FOREIGN KEY ("scim_user_id") REFERENCES "public"."scim_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_groups" ADD CONSTRAINT "scim_groups_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_groups" ADD CONSTRAINT "scim_groups_directory_id_scim_directories_id_fk" FOREIGN KEY ("directory_id") REFERENCES "public"."scim_directories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_requests" ADD CONSTRAINT "scim_requests_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_requests" ADD CONSTRAINT "scim_requests_directory_id_scim_directories_id_fk" FOREIGN KEY ("directory_id") REFERENCES "public"."scim_directories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_tokens" ADD CONSTRAINT "scim_tokens_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_tokens" ADD CONSTRAINT "scim_tokens_directory_id_scim_directories_id_fk" FOREIGN KEY ("directory_id") REFERENCES "public"."scim_directories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_directory_id_scim_directories_id_fk" FOREIGN KEY ("directory_id") REFERENCES "public"."scim_directories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "scim_directories_org_uq" ON "scim_directories" USING btree ("workspace_id","organization_id");--> statement-breakpoint
CREATE INDEX "scim_group_members_user_idx" ON "scim_group_members" USING btree ("workspace_id","scim_user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "scim_groups_display_name_uq" ON "scim_groups" USING btree ("workspace_id","directory_id","display_name_key");--> statement-breakpoint
CREATE INDEX "scim_groups_created_idx" ON "scim_groups" USING btree ("workspace_id","directory_id","created_at","id");--> statement-breakpoint
CREATE INDEX "scim_requests_directory_idx" ON "scim_requests" USING btree ("workspace_id","directory_id","at");--> statement-breakpoint
CREATE UNIQUE INDEX "scim_tokens_hash_uq" ON "scim_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "scim_tokens_directory_idx" ON "scim_tokens" USING btree ("workspace_id","directory_id");--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_user_name_uq" ON "scim_users" USING btree ("workspace_id","directory_id","user_name_key");--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_external_id_uq" ON "scim_users" USING btree ("workspace_id","directory_id","external_id") WHERE "scim_users"."external_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_account_uq" ON "scim_users" USING btree ("workspace_id","directory_id","user_id");--> statement-breakpoint
CREATE INDEX "scim_users_email_idx" ON "scim_users" USING btree ("workspace_id","directory_id","email_key");--> statement-breakpoint
CREATE INDEX "scim_users_created_idx" ON "scim_users" USING btree ("workspace_id","directory_id","created_at","id");