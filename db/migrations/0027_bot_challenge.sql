CREATE TABLE "bot_challenge_policies" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"mode" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "bot_challenge_solutions" (
	"workspace_id" text NOT NULL,
	"challenge" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "bot_challenge_solutions_workspace_id_challenge_pk" PRIMARY KEY("workspace_id","challenge")
);
--> statement-breakpoint
ALTER TABLE "authorization_transactions" ADD COLUMN "bot_challenged" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "bot_challenge_policies" ADD CONSTRAINT "bot_challenge_policies_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bot_challenge_solutions" ADD CONSTRAINT "bot_challenge_solutions_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "bot_challenge_solutions_expiry_idx" ON "bot_challenge_solutions" USING btree ("workspace_id","expires_at");