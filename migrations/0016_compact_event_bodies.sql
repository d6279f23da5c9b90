-- Event bodies (webhook_events.raw_body) and answer excerpts (delivery_attempts.response_excerpt)
-- are stored from now on as their text, or, when smaller, as a BLOB of the text's UTF-8 bytes
-- compressed with raw DEFLATE (worker/db/compact-body.ts); typeof() tells which. Both columns
-- keep their TEXT declaration: a column of TEXT affinity stores a BLOB as it is. Rows stored
-- before stay text and readable, so no table is rewritten.
--
-- SQL cannot read inside a compressed body, so the insert copies what queries read there:
-- timestamp_julian_day: julianday() of the body's `timestamp` (NULL when it is not a date),
-- which ordered delivery compares; data_subscription_id: the body's `data.subscription_id`
-- (the subscription one of the relay's own events is about), which replays and recoveries
-- skip. Rows stored before have neither: the queries read a text body's own JSON, as before,
-- and these columns only for a compressed one, so no backfill of the table is needed.
ALTER TABLE webhook_events ADD COLUMN timestamp_julian_day REAL;
ALTER TABLE webhook_events ADD COLUMN data_subscription_id TEXT;
