CREATE TABLE "workspace_hostnames" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"hostname" text NOT NULL,
	"verification_token" text NOT NULL,
	"verified_at" timestamp with time zone,
	"verification_method" text,
	"primary" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "related_origins" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "hosted_sessions" ADD COLUMN "hostname" text;--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "hostname" text;--> statement-breakpoint
ALTER TABLE "grants" ADD COLUMN "hostname" text;--> statement-breakpoint
ALTER TABLE "workspace_hostnames" ADD CONSTRAINT "workspace_hostnames_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "workspace_hostnames_workspace_hostname_uq" ON "workspace_hostnames" USING btree ("workspace_id","hostname");--> statement-breakpoint
CREATE UNIQUE INDEX "workspace_hostnames_verified_uq" ON "workspace_hostnames" USING btree ("hostname") WHERE "workspace_hostnames"."verified_at" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "workspace_hostnames_primary_uq" ON "workspace_hostnames" USING btree ("workspace_id") WHERE "workspace_hostnames"."primary";--> statement-breakpoint
CREATE INDEX "workspace_hostnames_hostname_idx" ON "workspace_hostnames" USING btree ("hostname");