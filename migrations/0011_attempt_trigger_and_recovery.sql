-- Who started each delivery attempt, and the bulk recovery jobs that re-enqueue deliveries
-- by filter. Every time is epoch milliseconds.

-- trigger: what started the attempt: 'schedule' (the first send and every retry on the
-- relay's own schedule), 'retry' (an operator's retry of the delivery), 'replay' (an
-- operator's replay of its event) or 'recover' (a bulk recovery job). Only the first attempt
-- after the operator's request carries it; the retries that follow are 'schedule'.
-- Attempts recorded before this migration were all the relay's own: 'schedule'.
-- operator: the operator's name given with the request (NULL when none, and on 'schedule').
ALTER TABLE delivery_attempts ADD COLUMN trigger TEXT NOT NULL DEFAULT 'schedule'
  CHECK (trigger IN ('schedule', 'retry', 'replay', 'recover'));
ALTER TABLE delivery_attempts ADD COLUMN operator TEXT;

-- One bulk recovery (POST /admin/deliveries/recover): its filter, its progress and its state.
-- filter_key: the filter as canonical JSON; while a job runs no second job with the same
-- filter can start (the partial unique index), so a repeated request answers the running one.
-- since / until / subscription_id / delivery_status / event_type: the filter (until, the
-- subscription, the event type NULL = any; delivery_status NULL = both 'failed' and
-- 'pending'); since inclusive and until exclusive, on deliveries.created_at.
-- pages: keyset pages done so far; the queue message of page N is acted on only while
-- pages = N, so a redelivered message never enqueues a page twice.
-- cursor_at / cursor_id: the (created_at, id) of the last delivery read (NULL before the first).
-- matched: deliveries the filter matched so far; enqueued: those reset and sent to the queue;
-- skipped_disabled: those left alone because their subscription is disabled or deleted.
-- state: 'running' until the last page ('done') or until it cannot go on ('failed', with error).
CREATE TABLE recovery_jobs (
  id TEXT NOT NULL PRIMARY KEY,
  filter_key TEXT NOT NULL,
  since INTEGER NOT NULL,
  until INTEGER,
  subscription_id TEXT,
  delivery_status TEXT CHECK (delivery_status IS NULL OR delivery_status IN ('failed', 'pending')),
  event_type TEXT,
  operator TEXT,
  state TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done', 'failed')),
  pages INTEGER NOT NULL DEFAULT 0,
  cursor_at INTEGER,
  cursor_id TEXT,
  matched INTEGER NOT NULL DEFAULT 0,
  enqueued INTEGER NOT NULL DEFAULT 0,
  skipped_disabled INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  started_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER
);

CREATE UNIQUE INDEX recovery_jobs_running_filter ON recovery_jobs (filter_key)
  WHERE state = 'running';

-- A recovery's pages: undelivered deliveries of one status in creation order.
CREATE INDEX deliveries_status_created ON deliveries (status, created_at, id);
