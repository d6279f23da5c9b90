-- Idempotency keys of the signing proxy (docs/gateway.md, "Idempotency keys"), scoped per
-- caller, so two callers choosing the same key never see each other's answers.
-- The primary key is the atomic claim: INSERT ... ON CONFLICT DO NOTHING.
CREATE TABLE idempotency_keys (
  caller TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('in_flight', 'completed')),
  locked_until INTEGER NOT NULL,
  response_status INTEGER,
  response_headers TEXT,
  response_body BLOB,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (caller, idempotency_key)
);

CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
