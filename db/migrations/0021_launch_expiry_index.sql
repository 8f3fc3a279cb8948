-- latchkey:no-transaction
-- Built without blocking writes to the table (docs/operations.md, "Upgrades"). Installations that
-- applied this migration when it was a plain CREATE INDEX keep that record: the same index.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "account_security_launches_expiry_idx" ON "account_security_launches" USING btree ("expires_at");
