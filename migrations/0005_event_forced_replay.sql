-- Who replayed an event the payment service did not confirm (status 'unconfirmed'), and when:
-- the admin API refuses such a replay unless it is forced, and keeps the last forced one here.
-- replay_forced_at: epoch ms; replay_forced_by: the operator name given with the replay
-- ('admin' when none); replay_forced_from: the client address the admin request came from.
ALTER TABLE webhook_events ADD COLUMN replay_forced_at INTEGER;
ALTER TABLE webhook_events ADD COLUMN replay_forced_by TEXT;
ALTER TABLE webhook_events ADD COLUMN replay_forced_from TEXT;
