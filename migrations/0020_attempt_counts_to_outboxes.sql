-- The attempt counts behind a subscription's success rate are now kept by its outbox (a
-- Durable Object, worker/relay/outbox-health.ts), which sees every attempt: the table goes.
DROP TABLE IF EXISTS subscription_attempt_hours;
