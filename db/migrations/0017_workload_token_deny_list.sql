CREATE TABLE "revoked_workload_tokens" (
	"token_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"client_pk" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "revoked_workload_tokens_expiry_idx" ON "revoked_workload_tokens" USING btree ("expires_at");