-- Every forced replay of an event, appended and never changed: who forced it, from where and
-- when. It replaces the single replay_forced_* columns of 0005, which a second forced replay
-- overwrote (their value is copied over first). Rows leave only with their event (its
-- retention purge, ON DELETE CASCADE); the trigger refuses any change to a row.
-- forced_at: epoch ms; forced_by: the operator name given with the replay ('admin' when none);
-- forced_from: the client address the admin request came from ('unknown' when none).
CREATE TABLE event_forced_replays (
  event_id TEXT NOT NULL REFERENCES webhook_events (event_id) ON DELETE CASCADE,
  forced_at INTEGER NOT NULL,
  forced_by TEXT NOT NULL,
  forced_from TEXT NOT NULL
);

CREATE INDEX event_forced_replays_by_event ON event_forced_replays (event_id, forced_at);

CREATE TRIGGER event_forced_replays_append_only BEFORE UPDATE ON event_forced_replays
BEGIN
  SELECT RAISE(ABORT, 'event_forced_replays is append-only');
END;

INSERT INTO event_forced_replays (event_id, forced_at, forced_by, forced_from)
SELECT event_id, replay_forced_at, COALESCE(replay_forced_by, 'admin'),
  COALESCE(replay_forced_from, 'unknown')
FROM webhook_events WHERE replay_forced_at IS NOT NULL;

ALTER TABLE webhook_events DROP COLUMN replay_forced_at;
ALTER TABLE webhook_events DROP COLUMN replay_forced_by;
ALTER TABLE webhook_events DROP COLUMN replay_forced_from;
