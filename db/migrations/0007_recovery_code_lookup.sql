-- Sets generated before the lookup part cannot be verified; none were issued outside development.
DELETE FROM "recovery_codes";--> statement-breakpoint
DROP INDEX "recovery_codes_user_idx";--> statement-breakpoint
ALTER TABLE "recovery_codes" ADD COLUMN "lookup" text NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "recovery_codes_lookup_uq" ON "recovery_codes" USING btree ("workspace_id","user_id","lookup");