-- Deferred confirmation of money events. A money webhook can arrive before the payment
-- service shows its record as final (or while the service is down): such an event is stored
-- with status 'awaiting_confirmation' and checked again on a backoff schedule
-- (worker/relay/confirmation-schedule.ts) until it is 'confirmed' (then fanned out) or
-- 'unconfirmed' (contradicted, or still not confirmed at the end of the schedule).
-- confirmation_reason: the last check's finding in words ('status processing', 'record not
-- found', 'amount 100.00 differs from the record's 90.00'); NULL for events never checked.
-- confirmation_checks: how many checks were made; also the fence of a re-check, which writes
-- only if the count is still the one it read, so two concurrent re-checks fan out once.
-- confirmation_checked_at: epoch ms of the last check, NULL before any.
-- next_check_at: epoch ms when the next check is due, NULL unless awaiting.
ALTER TABLE webhook_events ADD COLUMN confirmation_reason TEXT;
ALTER TABLE webhook_events ADD COLUMN confirmation_checks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_events ADD COLUMN confirmation_checked_at INTEGER;
ALTER TABLE webhook_events ADD COLUMN next_check_at INTEGER;

-- The cron sweeper's backstop: awaiting events whose next check is overdue, oldest due first.
CREATE INDEX webhook_events_next_check ON webhook_events (next_check_at, event_id)
  WHERE status = 'awaiting_confirmation';
