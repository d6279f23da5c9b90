-- The delivery outcome of each event, kept on the event so GET /admin/events can filter on it
-- through an index (newest first, keyset-paginated) instead of looking into every event's
-- deliveries until a page is full.
-- outcome, decided from the event's deliveries, the first that holds:
--   'failed'        a delivery failed for good (dead-lettered, or its subscriber answered 410);
--   'failing'       a delivery is pending after an attempt that failed (it will be retried);
--   'pending'       a delivery is pending and not attempted yet (or re-queued after a success);
--   'delivered'     every delivery delivered;
-- and when the event has no delivery:
--   'held'          the event is not fanned out: status awaiting_confirmation or unconfirmed;
--   'no_subscriber' no enabled subscription matched it.
-- Triggers keep it up to date whichever statement changes a delivery (ingress fan-out, the
-- consumer's attempts, dead letters, retries, replays, recovery), so no writer has to know;
-- D1 counts their writes in meta.changes, so a statement on deliveries that must know whether
-- it changed its row reads RETURNING instead.
-- The delivery triggers fire only when that delivery's own class changes (its first failed
-- attempt, delivered, failed, re-queued), not on every attempt, and recompute the outcome
-- from the event's few deliveries (found through UNIQUE (event_id, subscription_id)).
ALTER TABLE webhook_events ADD COLUMN outcome TEXT NOT NULL DEFAULT 'no_subscriber';

CREATE INDEX webhook_events_outcome_received ON webhook_events (outcome, received_at, event_id);

-- An event stored awaiting confirmation (or unconfirmed) is stored 'held' by its insert
-- (worker/db/webhook-events.ts), not by a trigger: D1 counts the rows a trigger writes in the
-- statement's meta.changes, which the ingress reads to tell a new event from a duplicate.
-- A held event confirmed with no matching subscription has no subscriber (one with deliveries
-- was set by the delivery triggers earlier in the same batch). The statements that change a
-- status read RETURNING, not meta.changes, for the same reason.
CREATE TRIGGER webhook_events_outcome_on_status AFTER UPDATE OF status ON webhook_events
WHEN NEW.outcome IN ('held', 'no_subscriber')
  AND (OLD.status IN ('awaiting_confirmation', 'unconfirmed'))
    IS NOT (NEW.status IN ('awaiting_confirmation', 'unconfirmed'))
BEGIN
  UPDATE webhook_events
  SET outcome = CASE WHEN NEW.status IN ('awaiting_confirmation', 'unconfirmed')
    THEN 'held' ELSE 'no_subscriber' END
  WHERE event_id = NEW.event_id;
END;

CREATE TRIGGER deliveries_outcome_on_insert AFTER INSERT ON deliveries
BEGIN
  UPDATE webhook_events SET outcome = (
    SELECT CASE
      WHEN COUNT(*) = 0 THEN CASE WHEN webhook_events.status IN ('awaiting_confirmation', 'unconfirmed')
        THEN 'held' ELSE 'no_subscriber' END
      WHEN SUM(d.status = 'failed') > 0 THEN 'failed'
      WHEN SUM(d.status = 'pending' AND d.attempts > 0
        AND COALESCE(d.last_status NOT BETWEEN 200 AND 299, 1)) > 0 THEN 'failing'
      WHEN SUM(d.status = 'pending') > 0 THEN 'pending'
      ELSE 'delivered' END
    FROM deliveries AS d WHERE d.event_id = webhook_events.event_id)
  WHERE event_id = NEW.event_id;
END;

CREATE TRIGGER deliveries_outcome_on_update AFTER UPDATE OF status, attempts, last_status ON deliveries
WHEN (CASE WHEN OLD.status = 'pending' AND OLD.attempts > 0
        AND COALESCE(OLD.last_status NOT BETWEEN 200 AND 299, 1) THEN 'failing' ELSE OLD.status END)
  IS NOT (CASE WHEN NEW.status = 'pending' AND NEW.attempts > 0
        AND COALESCE(NEW.last_status NOT BETWEEN 200 AND 299, 1) THEN 'failing' ELSE NEW.status END)
BEGIN
  UPDATE webhook_events SET outcome = (
    SELECT CASE
      WHEN COUNT(*) = 0 THEN CASE WHEN webhook_events.status IN ('awaiting_confirmation', 'unconfirmed')
        THEN 'held' ELSE 'no_subscriber' END
      WHEN SUM(d.status = 'failed') > 0 THEN 'failed'
      WHEN SUM(d.status = 'pending' AND d.attempts > 0
        AND COALESCE(d.last_status NOT BETWEEN 200 AND 299, 1)) > 0 THEN 'failing'
      WHEN SUM(d.status = 'pending') > 0 THEN 'pending'
      ELSE 'delivered' END
    FROM deliveries AS d WHERE d.event_id = webhook_events.event_id)
  WHERE event_id = NEW.event_id;
END;

CREATE TRIGGER deliveries_outcome_on_delete AFTER DELETE ON deliveries
BEGIN
  UPDATE webhook_events SET outcome = (
    SELECT CASE
      WHEN COUNT(*) = 0 THEN CASE WHEN webhook_events.status IN ('awaiting_confirmation', 'unconfirmed')
        THEN 'held' ELSE 'no_subscriber' END
      WHEN SUM(d.status = 'failed') > 0 THEN 'failed'
      WHEN SUM(d.status = 'pending' AND d.attempts > 0
        AND COALESCE(d.last_status NOT BETWEEN 200 AND 299, 1)) > 0 THEN 'failing'
      WHEN SUM(d.status = 'pending') > 0 THEN 'pending'
      ELSE 'delivered' END
    FROM deliveries AS d WHERE d.event_id = webhook_events.event_id)
  WHERE event_id = OLD.event_id;
END;

-- Events stored before this migration: the same rule.
UPDATE webhook_events SET outcome = (
  SELECT CASE
    WHEN COUNT(*) = 0 THEN CASE WHEN webhook_events.status IN ('awaiting_confirmation', 'unconfirmed')
      THEN 'held' ELSE 'no_subscriber' END
    WHEN SUM(d.status = 'failed') > 0 THEN 'failed'
    WHEN SUM(d.status = 'pending' AND d.attempts > 0
      AND COALESCE(d.last_status NOT BETWEEN 200 AND 299, 1)) > 0 THEN 'failing'
    WHEN SUM(d.status = 'pending') > 0 THEN 'pending'
    ELSE 'delivered' END
  FROM deliveries AS d WHERE d.event_id = webhook_events.event_id);
