-- When webhook events are spread over several D1 databases (D1_SHARDS), two copies of one event
-- received around the start of a new generation of shards may be written to two databases at
-- once; each then looks for the other (worker/relay/event-store.ts). kept_at (epoch ms) marks a
-- copy whose writer looked and found none: it stays, and a later copy that finds it is a plain
-- duplicate. NULL on every other row: only writes that close to a generation's start set it.
ALTER TABLE webhook_events ADD COLUMN kept_at INTEGER;
