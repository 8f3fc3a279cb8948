ALTER TABLE "hosted_sessions" ADD COLUMN "evidence" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- Back-fill: until now the only writer (the hosted password sign-in) stored amr ["pwd"] and
-- auth_time = the moment of that password check, so each such session gets that one password
-- event (lib/authn/evidence.ts, evidenceFor("password", auth_time)). `at` is formatted like
-- Date.toISOString().
UPDATE "hosted_sessions"
SET "evidence" = jsonb_build_array(jsonb_build_object(
  'method', 'password',
  'amr', '["pwd"]'::jsonb,
  'strength', 'knowledge',
  'factorId', null,
  'at', to_char("auth_time" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
))
WHERE "evidence" = '[]'::jsonb AND "amr" = '["pwd"]'::jsonb;
