-- Webhook subscriptions of the relay, managed through the admin API
-- (/admin/subscriptions). Every time is epoch milliseconds.
-- event_types: a JSON array of event types, NULL = every event type.
-- enabled: 1 or 0; a 410 from the subscriber sets it to 0.
-- secret: the current `whsec_` signing secret. On rotation the old one moves to
-- previous_secret, still signed with until previous_secret_expires_at (24 h later).
CREATE TABLE subscriptions (
  id TEXT NOT NULL PRIMARY KEY,
  url TEXT NOT NULL,
  event_types TEXT,
  description TEXT,
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_secret_expires_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);

-- Admin listing, newest first, with the id as tie-breaker.
CREATE INDEX subscriptions_created ON subscriptions (created_at, id);
