/**
 * The relay honours a subscriber's `Retry-After` as the SDK does (test/shared/retry-after-suite.ts):
 * each value goes through the real Worker's queue consumer, the real D1 and the recording
 * receiver over real HTTP, which answers 503 with it.
 */
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { RETRY_DELAYS_SEC, RETRY_JITTER } from '../../../worker/relay/retry-schedule.ts';
import { retryAfterSuite } from '../../shared/retry-after-suite.ts';
import { useCapturedLogs } from '../helpers.ts';
import { runQueue, storeDelivery } from './delivery-helpers.ts';

useCapturedLogs();

// The first scheduled delay at the top of its jitter: a longer delay came from Retry-After.
const LONGEST_SCHEDULED_SEC = Math.round((RETRY_DELAYS_SEC[0] ?? 0) * (1 + RETRY_JITTER));

retryAfterSuite('relay delivery schedule', async (value) => {
  const stored = await storeDelivery({ query: { status: '503', retry_after: value } });
  const result = await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
  const delay = result.retryMessages[0]?.delaySeconds ?? -1;
  return delay > LONGEST_SCHEDULED_SEC ? delay : undefined;
});
