CREATE TABLE "pushed_authorization_requests" (
	"workspace_id" text NOT NULL,
	"uri_hash" text NOT NULL,
	"client_pk" text NOT NULL,
	"client_id" text NOT NULL,
	"parameters" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	CONSTRAINT "pushed_authorization_requests_workspace_id_uri_hash_pk" PRIMARY KEY("workspace_id","uri_hash")
);
--> statement-breakpoint
ALTER TABLE "pushed_authorization_requests" ADD CONSTRAINT "pushed_authorization_requests_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pushed_authorization_requests" ADD CONSTRAINT "pushed_authorization_requests_client_pk_clients_id_fk" FOREIGN KEY ("client_pk") REFERENCES "public"."clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "pushed_authorization_requests_expiry_idx" ON "pushed_authorization_requests" USING btree ("workspace_id","expires_at");