-- A recovery job's kind. 'deliveries': a bulk recovery (POST /admin/deliveries/recover) that
-- re-enqueues existing deliveries matching its filter, its cursor on deliveries.(created_at, id).
-- 'missed_events': started when a disabled subscription is enabled again with requeue_pending:
-- it creates and enqueues the deliveries the subscription never got because it was disabled
-- when the events fanned out; its filter is the subscription and the disable's span
-- (since = disabled_at, until = the re-enable), its cursor on webhook_events.(received_at,
-- event_id), and matched / enqueued count the events found without a delivery and the
-- deliveries created. Jobs stored before this migration were all bulk recoveries.
ALTER TABLE recovery_jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'deliveries'
  CHECK (kind IN ('deliveries', 'missed_events'));
