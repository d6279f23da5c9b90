-- Recovery jobs over several event shards (D1_SHARDS). A job walks the shards one after
-- another, in the order every generation lists them; its cursor (cursor_at, cursor_id) is a
-- position inside the shard named here. NULL: the first shard of the walk (every job before
-- this migration, and every job while there is one shard).
ALTER TABLE recovery_jobs ADD COLUMN cursor_shard TEXT;

-- The pages of recovery jobs taken on an event shard other than DB. There a statement cannot
-- read the job's row (recovery_jobs lives in DB), so the page's own row here is its guard:
-- the reset (or the missed deliveries' insert) runs only while no row of (job_id, page)
-- exists, and writes it in the same transaction, with what the page did (its cursor and
-- counts) so that whichever run of the step then moves the job in DB records the same.
-- Rows are deleted a day after their page was taken, by later pages on the same shard.
CREATE TABLE recovery_pages (
  job_id TEXT NOT NULL,
  page INTEGER NOT NULL,
  cursor_at INTEGER,
  cursor_id TEXT,
  matched INTEGER NOT NULL,
  skipped_disabled INTEGER NOT NULL,
  enqueued INTEGER NOT NULL,
  last INTEGER NOT NULL,
  taken_at INTEGER NOT NULL,
  PRIMARY KEY (job_id, page)
);

CREATE INDEX recovery_pages_taken ON recovery_pages (taken_at);
