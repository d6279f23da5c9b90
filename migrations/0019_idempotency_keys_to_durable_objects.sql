-- Idempotency keys now live in Durable Objects (worker/objects/idempotency-keys.ts), not in
-- D1: the table and its index go.
DROP INDEX IF EXISTS idempotency_keys_expires_at;
DROP TABLE IF EXISTS idempotency_keys;
