-- Deliveries of the relay: one row per (event, subscription),
-- written in the same D1 batch as the event at ingress, delivered through the
-- DELIVERIES queue. Every time is epoch milliseconds.
-- status: 'pending' until delivered (2xx), 'failed' on a 410 or once dead-lettered.
-- attempts: how many attempts delivery_attempts holds for it.
-- next_attempt_at: when the next attempt is due (NULL once settled); the sweeper
-- re-enqueues pending deliveries stuck past it.
-- last_status: the HTTP status of the last attempt, NULL when it got no response.
-- subscription_id has no foreign key: deleting a subscription keeps its delivery history
-- (the consumer treats a missing subscription as gone). Events cascade (retention purge).
CREATE TABLE deliveries (
  id TEXT NOT NULL PRIMARY KEY,
  event_id TEXT NOT NULL REFERENCES webhook_events (event_id) ON DELETE CASCADE,
  subscription_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  last_status INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (event_id, subscription_id)
);

-- The sweeper and the admin counts: deliveries by status and due time.
CREATE INDEX deliveries_status_due ON deliveries (status, next_attempt_at);
CREATE INDEX deliveries_subscription ON deliveries (subscription_id, created_at);

-- Every attempt of a delivery, kept for the admin API: status NULL when no response came
-- (network error, timeout); response_excerpt is the first 2 KB of the response body.
CREATE TABLE delivery_attempts (
  delivery_id TEXT NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  status INTEGER,
  latency_ms INTEGER NOT NULL,
  error TEXT,
  response_excerpt TEXT,
  PRIMARY KEY (delivery_id, attempt)
);
