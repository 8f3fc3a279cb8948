ALTER TABLE "access_tokens" DROP CONSTRAINT "access_tokens_workspace_id_workspaces_id_fk";
--> statement-breakpoint
ALTER TABLE "access_tokens" DROP CONSTRAINT "access_tokens_client_pk_clients_id_fk";
--> statement-breakpoint
ALTER TABLE "access_tokens" DROP CONSTRAINT "access_tokens_grant_id_grants_id_fk";
--> statement-breakpoint
ALTER TABLE "access_tokens" DROP CONSTRAINT "access_tokens_user_id_users_id_fk";
--> statement-breakpoint
ALTER TABLE "access_tokens" DROP CONSTRAINT "access_tokens_session_id_hosted_sessions_id_fk";
--> statement-breakpoint
ALTER TABLE "access_tokens" DROP CONSTRAINT "access_tokens_credential_id_client_secrets_id_fk";
--> statement-breakpoint
ALTER TABLE "access_tokens" DROP CONSTRAINT "access_tokens_api_id_apis_id_fk";
