-- Every copy of a webhook event now meets the others in the event's own Durable Object
-- (worker/objects/webhook-events.ts), which writes it once: copies written to two shards around
-- a generation's start no longer happen, so the mark that settled them goes.
ALTER TABLE webhook_events DROP COLUMN kept_at;
