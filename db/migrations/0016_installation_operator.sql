-- Installations set up before installation operators existed: the operator who completed the
-- console setup becomes one (owner of the reserved system workspace), as setup now does. Only
-- installation operators create workspaces; others are made with
-- `latchkey operator grant system <email> owner`.
INSERT INTO "operator_memberships" ("id", "operator_user_id", "workspace_id", "role", "created_at")
SELECT DISTINCT ON (u."id") gen_random_uuid()::text, u."id", 'system', 'owner', now()
FROM "audit_events" e
JOIN "users" u ON u."id" = e."actor" AND u."workspace_id" = 'system'
WHERE e."workspace_id" = 'system' AND e."type" = 'console.setup.completed'
ON CONFLICT DO NOTHING;
