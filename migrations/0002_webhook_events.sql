-- Webhook events received by the relay's ingress (POST /webhooks), stored before the 200.
-- The primary key is the durable dedup: INSERT ... ON CONFLICT (event_id) DO NOTHING.
-- raw_body is the exact body received (UTF-8 JSON text), delivered as-is later.
-- status: 'received', or 'confirmed' / 'unconfirmed' for money events checked upstream;
-- plain TEXT without a CHECK, so a new status needs no table rebuild.
CREATE TABLE webhook_events (
  event_id TEXT NOT NULL PRIMARY KEY,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'received',
  received_at INTEGER NOT NULL,
  raw_body TEXT NOT NULL
);

-- Admin listing (GET /admin/events): newest first, filtered by type or status, keyset-paginated
-- on (received_at, event_id). The last index also serves date ranges and the retention purge.
CREATE INDEX webhook_events_type_received ON webhook_events (event_type, received_at, event_id);
CREATE INDEX webhook_events_status_received ON webhook_events (status, received_at, event_id);
CREATE INDEX webhook_events_received ON webhook_events (received_at, event_id);
