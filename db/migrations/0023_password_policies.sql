CREATE TABLE "password_policies" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"screening_minimum_score" smallint,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "password_policies" ADD CONSTRAINT "password_policies_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;