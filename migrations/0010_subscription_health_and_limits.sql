-- Per-subscription delivery limits and ordering, and the health of each subscriber.
-- Every time is epoch milliseconds.

-- max_per_second: the most attempts a second to this subscriber, a decimal (0.5 = one every
-- 2 s) from 0.01 to 1000; NULL = no limit.
-- max_in_flight: the most attempts to this subscriber at the same time, 1 to 100; NULL =
-- the relay's default.
-- ordered: 1 = the events of one reference are delivered in the provider's order.
ALTER TABLE subscriptions ADD COLUMN max_per_second REAL
  CHECK (max_per_second IS NULL OR (max_per_second >= 0.01 AND max_per_second <= 1000));
ALTER TABLE subscriptions ADD COLUMN max_in_flight INTEGER
  CHECK (max_in_flight IS NULL OR (max_in_flight >= 1 AND max_in_flight <= 100));
ALTER TABLE subscriptions ADD COLUMN ordered INTEGER NOT NULL DEFAULT 0 CHECK (ordered IN (0, 1));

-- Health: `disabled` while enabled = 0, else `failing` while failing_since is set, else
-- `healthy`.
-- failing_since: when the unbroken run of failed attempts began (NULL after a success);
-- the relay disables the subscription once the run spans SUBSCRIPTION_DISABLE_AFTER_HOURS.
-- disabled_at: when it was last disabled (NULL while enabled).
-- health_changed_at / health_reason: when the state last changed and why, in words.
ALTER TABLE subscriptions ADD COLUMN failing_since INTEGER;
ALTER TABLE subscriptions ADD COLUMN disabled_at INTEGER;
ALTER TABLE subscriptions ADD COLUMN health_changed_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN health_reason TEXT;

UPDATE subscriptions SET health_changed_at = created_at WHERE enabled = 1;
UPDATE subscriptions
SET disabled_at = updated_at, health_changed_at = updated_at,
  health_reason = 'disabled before the reason was recorded'
WHERE enabled = 0;

-- Attempts per subscription and UTC hour (hour = epoch ms / 3600000, an integer), counted
-- when each attempt is recorded, so the recent success rate reads at most a day of rows
-- instead of scanning the attempts. Rows older than the window are deleted as new ones are
-- written; they go with their subscription.
CREATE TABLE subscription_attempt_hours (
  subscription_id TEXT NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
  hour INTEGER NOT NULL,
  succeeded INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (subscription_id, hour)
) WITHOUT ROWID;
