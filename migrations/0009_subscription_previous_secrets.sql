-- Every secret a subscription's rotations replaced, each signed with until its own expiry
-- (a second rotation within the grace period no longer drops the first replaced secret,
-- which a subscriber may still be verifying with mid-rollout). Rows go with their
-- subscription (ON DELETE CASCADE); expired ones are deleted at the next rotation.
-- expires_at: epoch ms.
-- The single previous_secret / previous_secret_expires_at columns of 0003 are superseded:
-- their value is moved here and they stay NULL (a CHECK constraint names them, so SQLite
-- cannot drop them without rebuilding the table that deliveries reference).
CREATE TABLE subscription_previous_secrets (
  subscription_id TEXT NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
  secret TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);

CREATE INDEX subscription_previous_secrets_by_subscription
  ON subscription_previous_secrets (subscription_id, expires_at);

INSERT INTO subscription_previous_secrets (subscription_id, secret, expires_at)
SELECT id, previous_secret, previous_secret_expires_at FROM subscriptions
WHERE previous_secret IS NOT NULL;

UPDATE subscriptions SET previous_secret = NULL, previous_secret_expires_at = NULL;
