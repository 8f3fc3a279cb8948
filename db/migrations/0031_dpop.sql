CREATE TABLE "dpop_proofs" (
	"workspace_id" text NOT NULL,
	"proof_hash" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "dpop_proofs_workspace_id_proof_hash_pk" PRIMARY KEY("workspace_id","proof_hash")
);
--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "dpop_jkt" text;--> statement-breakpoint
ALTER TABLE "grants" ADD COLUMN "dpop_jkt" text;--> statement-breakpoint
ALTER TABLE "dpop_proofs" ADD CONSTRAINT "dpop_proofs_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dpop_proofs_expiry_idx" ON "dpop_proofs" USING btree ("workspace_id","expires_at");