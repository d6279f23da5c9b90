-- What the operator console asks of the admin API: events searched by the payment's
-- reference, deliveries listed newest first, and deliveries counted per hour.

-- reference: the event body's data.reference when it is a JSON string, else NULL; written
-- at ingress from the parsed envelope. GET /admin/events?reference= matches it exactly,
-- newest first, keyset-paginated on (received_at, event_id) like the other filters.
ALTER TABLE webhook_events ADD COLUMN reference TEXT;
CREATE INDEX webhook_events_reference_received ON webhook_events (reference, received_at, event_id);

-- Events stored before this migration: the same rule, read from the stored body. The CASE
-- keeps a body that is not valid JSON (none is stored by the ingress) from failing the
-- migration: json_type would raise an error on it.
UPDATE webhook_events
SET reference = json_extract(raw_body, '$.data.reference')
WHERE CASE WHEN json_valid(raw_body) THEN json_type(raw_body, '$.data.reference') END = 'text';

-- GET /admin/deliveries: newest first by (updated_at, id), alone or filtered by status or
-- subscription (an event's few deliveries are found through UNIQUE (event_id, subscription_id)).
CREATE INDEX deliveries_updated ON deliveries (updated_at, id);
CREATE INDEX deliveries_status_updated ON deliveries (status, updated_at, id);
CREATE INDEX deliveries_subscription_updated ON deliveries (subscription_id, updated_at, id);

-- GET /admin/deliveries/hourly: a range of created_at grouped by hour and status, read from
-- the index alone.
CREATE INDEX deliveries_created_status ON deliveries (created_at, status);
