CREATE TABLE "organization_portal_links" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"organization_id" text NOT NULL,
	"email" text NOT NULL,
	"email_normalized" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_by" text NOT NULL,
	"created_by_email" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"revoked_by" text
);
--> statement-breakpoint
CREATE TABLE "organization_portal_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"organization_id" text NOT NULL,
	"link_id" text NOT NULL,
	"email" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "organization_portal_links" ADD CONSTRAINT "organization_portal_links_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_portal_links" ADD CONSTRAINT "organization_portal_links_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_portal_sessions" ADD CONSTRAINT "organization_portal_sessions_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_portal_sessions" ADD CONSTRAINT "organization_portal_sessions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_portal_sessions" ADD CONSTRAINT "organization_portal_sessions_link_id_organization_portal_links_id_fk" FOREIGN KEY ("link_id") REFERENCES "public"."organization_portal_links"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "organization_portal_links_token_uq" ON "organization_portal_links" USING btree ("workspace_id","token_hash");--> statement-breakpoint
CREATE INDEX "organization_portal_links_org_idx" ON "organization_portal_links" USING btree ("workspace_id","organization_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "organization_portal_sessions_token_uq" ON "organization_portal_sessions" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "organization_portal_sessions_link_idx" ON "organization_portal_sessions" USING btree ("link_id");