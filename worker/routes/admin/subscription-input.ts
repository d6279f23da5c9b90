/**
 * The admin API's subscription request bodies: their valibot schemas (every issue reported
 * with its path; the route table reads the bodies with them) and what a valid one asks for.
 */
import * as v from 'valibot';
import { DEFAULT_SUBSCRIBER_SETTINGS, type SubscriberSettings } from '../../config.ts';
import type { SubscriptionChanges } from '../../db/subscriptions.ts';
import { MAX_EVENT_KEY_LENGTH } from '../../relay/envelope.ts';
import { checkSubscriptionUrl } from '../../relay/subscription-url.ts';
import { knownEventTypesCheck } from './event-types.ts';
import {
  maxInFlightSchema,
  maxPerSecondSchema,
  orderedSchema,
} from './subscription-limits-input.ts';

/** Longest subscription URL accepted, in characters. */
const MAX_URL_LENGTH = 2048;
/** Most event types one subscription may filter on. */
const MAX_EVENT_TYPES = 100;
/** Longest description accepted, in characters. */
const MAX_DESCRIPTION_LENGTH = 500;

/** A validated `POST /admin/subscriptions` body; absent fields take their defaults. */
interface NewSubscriptionInput {
  readonly url: string;
  /** `null` (the default) = every event type. */
  readonly eventTypes: readonly string[] | null;
  readonly description: string | null;
  /** @default true */
  readonly enabled: boolean;
  /** `null` (the default) = no limit. */
  readonly maxPerSecond: number | null;
  /** `null` (the default) = the relay's default. */
  readonly maxInFlight: number | null;
  /** @default false */
  readonly ordered: boolean;
}

/** What a validated `PATCH /admin/subscriptions/:id` body asks for. */
interface SubscriptionPatch {
  /** The fields to change. */
  readonly changes: SubscriptionChanges;
  /**
   * Re-enqueue what waits for the subscription as it is enabled again (only with
   * `enabled: true`).
   */
  readonly requeuePending: boolean;
}

/** What the URL rules of worker/relay/subscription-url.ts accept, for the OpenAPI document. */
const SUBSCRIPTION_URL_RULES =
  'An https URL on port 443 or 80 (SUBSCRIBER_PORTS may add ports), stored normalized ' +
  '(trailing dots of the host removed). Addresses of the IANA special-purpose ranges ' +
  '(private, link-local, documentation, NAT64 and 6to4 forms of those, ...) and metadata ' +
  'hosts are refused; loopback ones too unless ALLOW_LOCAL_SUBSCRIBERS is on (then http and ' +
  'any port are allowed for them). A host name is resolved before each delivery, which ' +
  'fails if it resolves to such an address.';

const urlSchema = (settings: SubscriberSettings) =>
  v.pipe(
    v.string(),
    v.maxLength(MAX_URL_LENGTH, `Expected at most ${MAX_URL_LENGTH} characters`),
    // Metadata only (skipped when parsing): the rules below are a transform, which the
    // OpenAPI converter stops at, so they are said in words.
    v.description(SUBSCRIPTION_URL_RULES),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const check = checkSubscriptionUrl(dataset.value, settings);
      if (check.ok) return check.url;
      addIssue({ message: check.message });
      return NEVER;
    }),
  );

const eventTypesSchema = v.nullable(
  v.pipe(
    v.array(
      v.pipe(
        v.string(),
        v.nonEmpty('Expected a non-empty string'),
        v.maxLength(MAX_EVENT_KEY_LENGTH, `Expected at most ${MAX_EVENT_KEY_LENGTH} characters`),
      ),
    ),
    v.nonEmpty('Expected at least one event type (null or absent means every event type)'),
    v.maxLength(MAX_EVENT_TYPES, `Expected at most ${MAX_EVENT_TYPES} event types`),
  ),
);

// Repeats carry no meaning: the first of each is kept. They are removed after validation,
// so an issue's index (`event_types.2`) is the one the caller sent.
const distinct = (types: readonly string[] | null): string[] | null =>
  types === null ? null : [...new Set(types)];

const descriptionSchema = v.nullable(
  v.pipe(
    v.string(),
    v.maxLength(MAX_DESCRIPTION_LENGTH, `Expected at most ${MAX_DESCRIPTION_LENGTH} characters`),
  ),
);

/**
 * The `POST /admin/subscriptions` body schema for the given subscriber settings: strict (a
 * misspelt field such as `eventTypes`, or a `secret`, is refused, not silently ignored).
 * Each `event_types` entry must be a type of the event-type catalog unless
 * `allow_custom_event_types` is `true` (worker/routes/admin/event-types.ts).
 *
 * @param settings - the subscriber settings the URL rules follow.
 */
export const createSchema = (settings: SubscriberSettings) =>
  v.pipe(
    v.strictObject({
      url: urlSchema(settings),
      event_types: v.optional(eventTypesSchema),
      description: v.optional(descriptionSchema),
      enabled: v.optional(v.boolean()),
      max_per_second: v.optional(maxPerSecondSchema),
      max_in_flight: v.optional(maxInFlightSchema),
      ordered: v.optional(orderedSchema),
      allow_custom_event_types: v.optional(v.boolean()),
    }),
    knownEventTypesCheck(),
  );

const FIELDS = [
  'url',
  'event_types',
  'description',
  'enabled',
  'max_per_second',
  'max_in_flight',
  'ordered',
] as const;

/**
 * The `PATCH /admin/subscriptions/:id` body schema for the given subscriber settings:
 * strict, at least one field, `event_types` checked against the catalog as on create.
 *
 * @param settings - the subscriber settings the URL rules follow.
 */
export const patchSchema = (settings: SubscriberSettings) =>
  v.pipe(
    v.strictObject({
      url: v.optional(urlSchema(settings)),
      event_types: v.optional(eventTypesSchema),
      description: v.optional(descriptionSchema),
      enabled: v.optional(v.boolean()),
      max_per_second: v.optional(maxPerSecondSchema),
      max_in_flight: v.optional(maxInFlightSchema),
      ordered: v.optional(orderedSchema),
      requeue_pending: v.optional(
        v.pipe(
          v.boolean(),
          v.description(
            'With enabled: true on a disabled subscription, re-enqueue its pending deliveries ' +
              'and those failed since it began failing (or was disabled); the answer says how many.',
          ),
        ),
      ),
      allow_custom_event_types: v.optional(v.boolean()),
    }),
    knownEventTypesCheck(),
    v.check(
      (body) => FIELDS.some((field) => body[field] !== undefined),
      `Expected at least one of ${FIELDS.join(', ')}`,
    ),
    v.forward(
      v.check(
        (body) => body.requeue_pending !== true || body.enabled === true,
        'Expected requeue_pending only with enabled: true',
      ),
      ['requeue_pending'],
    ),
  );

/**
 * The `POST /admin/subscriptions` body as published in the OpenAPI document:
 * strict `{ url, event_types?, description?, enabled?, max_per_second?, max_in_flight?,
 * ordered? }`, built with the default
 * subscriber settings (`ALLOW_LOCAL_SUBSCRIBERS` off, ports 443 and 80).
 * Its route validates with the same schema built for the current settings ({@link createSchema}).
 */
export const NewSubscriptionSchema = createSchema(DEFAULT_SUBSCRIBER_SETTINGS);

/**
 * The `PATCH /admin/subscriptions/:id` body as published in the OpenAPI document:
 * strict, at least one of `url`, `event_types`, `description`, `enabled`, `max_per_second`,
 * `max_in_flight`, `ordered` (a `check`), `requeue_pending` only with `enabled: true`,
 * built with the default subscriber settings. Its route validates with the same schema
 * built for the current settings ({@link patchSchema}).
 */
export const SubscriptionChangesSchema = patchSchema(DEFAULT_SUBSCRIBER_SETTINGS);

/** A `POST /admin/subscriptions` body as its schema outputs it. */
type NewSubscriptionBody = v.InferOutput<typeof NewSubscriptionSchema>;

/** A `PATCH /admin/subscriptions/:id` body as its schema outputs it. */
type SubscriptionChangesBody = v.InferOutput<typeof SubscriptionChangesSchema>;

/**
 * The subscription a validated `POST /admin/subscriptions` body asks for (its row in the
 * route table validates it with the create schema built for the subscriber settings,
 * `ALLOW_LOCAL_SUBSCRIBERS` and `SUBSCRIBER_PORTS`).
 *
 * @param body - the validated body.
 * @returns the input with defaults applied and the URL normalized.
 */
export function newSubscriptionInput(body: NewSubscriptionBody): NewSubscriptionInput {
  return {
    url: body.url,
    eventTypes: distinct(body.event_types ?? null),
    description: body.description ?? null,
    enabled: body.enabled ?? true,
    maxPerSecond: body.max_per_second ?? null,
    maxInFlight: body.max_in_flight ?? null,
    ordered: body.ordered ?? false,
  };
}

/**
 * What a validated `PATCH /admin/subscriptions/:id` body asks for: the changes (at least one
 * of `url`, `event_types` (null = every type), `description` (null clears it), `enabled`,
 * `max_per_second` and `max_in_flight` (null = none / the default), `ordered`), and whether
 * to re-enqueue what waits for it as it is enabled again.
 *
 * @param body - the validated body.
 * @returns the changes, with only the given fields set, and `requeuePending`.
 */
export function subscriptionPatch(body: SubscriptionChangesBody): SubscriptionPatch {
  const { url, event_types, description, enabled, max_per_second, max_in_flight, ordered } = body;
  const changes: SubscriptionChanges = {
    ...(url === undefined ? {} : { url }),
    ...(event_types === undefined ? {} : { eventTypes: distinct(event_types) }),
    ...(description === undefined ? {} : { description }),
    ...(enabled === undefined ? {} : { enabled }),
    ...(max_per_second === undefined ? {} : { maxPerSecond: max_per_second }),
    ...(max_in_flight === undefined ? {} : { maxInFlight: max_in_flight }),
    ...(ordered === undefined ? {} : { ordered }),
  };
  return { changes, requeuePending: body.requeue_pending === true };
}
