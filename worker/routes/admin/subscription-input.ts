/**
 * The admin API's subscription request bodies (DESIGN 4.3, issue 5 point 3): read
 * (bounded, JSON only) and validated with valibot, every issue reported with its path.
 */
import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { toIssues } from '../../../lib/internal/issues.ts';
import type { SubscriptionChanges } from '../../db/subscriptions.ts';
import { readCapped, requireJsonContentType } from '../../http/body.ts';
import { type ErrorIssue, HttpError } from '../../http/errors.ts';
import { maxBodyBytes } from '../../proxy/stages/validate.ts';
import { MAX_EVENT_KEY_LENGTH } from '../../relay/envelope.ts';
import { checkSubscriptionUrl } from '../../relay/subscription-url.ts';

/** Longest subscription URL accepted, in characters. */
export const MAX_URL_LENGTH = 2048;
/** Most event types one subscription may filter on. */
export const MAX_EVENT_TYPES = 100;
/** Longest description accepted, in characters. */
export const MAX_DESCRIPTION_LENGTH = 500;

/** A validated `POST /admin/subscriptions` body; absent fields take their defaults. */
export interface NewSubscriptionInput {
  readonly url: string;
  /** `null` (the default) = every event type. */
  readonly eventTypes: readonly string[] | null;
  readonly description: string | null;
  /** @default true */
  readonly enabled: boolean;
}

// Fatal: invalid UTF-8 is refused, not replaced.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** What the URL rules of worker/relay/subscription-url.ts accept, for the OpenAPI document. */
export const SUBSCRIPTION_URL_RULES =
  'An https URL, stored normalized. Private, link-local and metadata addresses are ' +
  'refused; loopback ones too unless ALLOW_LOCAL_SUBSCRIBERS is on (then http is allowed for them).';

const urlSchema = (allowLocal: boolean) =>
  v.pipe(
    v.string(),
    v.maxLength(MAX_URL_LENGTH, `Expected at most ${MAX_URL_LENGTH} characters`),
    // Metadata only (skipped when parsing): the rules below are a transform, which the
    // OpenAPI converter stops at, so they are said in words.
    v.description(SUBSCRIPTION_URL_RULES),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const check = checkSubscriptionUrl(dataset.value, { allowLocal });
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
    // Repeats carry no meaning: keep the first of each.
    v.transform((types) => [...new Set(types)]),
  ),
);

const descriptionSchema = v.nullable(
  v.pipe(
    v.string(),
    v.maxLength(MAX_DESCRIPTION_LENGTH, `Expected at most ${MAX_DESCRIPTION_LENGTH} characters`),
  ),
);

// Strict: a misspelt field (`eventTypes`) or a `secret` is refused, not silently ignored.
const createSchema = (allowLocal: boolean) =>
  v.strictObject({
    url: urlSchema(allowLocal),
    event_types: v.optional(eventTypesSchema),
    description: v.optional(descriptionSchema),
    enabled: v.optional(v.boolean()),
  });

const FIELDS = ['url', 'event_types', 'description', 'enabled'] as const;

const patchSchema = (allowLocal: boolean) =>
  v.pipe(
    v.strictObject({
      url: v.optional(urlSchema(allowLocal)),
      event_types: v.optional(eventTypesSchema),
      description: v.optional(descriptionSchema),
      enabled: v.optional(v.boolean()),
    }),
    v.check(
      (body) => FIELDS.some((field) => body[field] !== undefined),
      `Expected at least one of ${FIELDS.join(', ')}`,
    ),
  );

/**
 * The `POST /admin/subscriptions` body as published in the OpenAPI document (DESIGN 4.3):
 * strict `{ url, event_types?, description?, enabled? }`, built with
 * `ALLOW_LOCAL_SUBSCRIBERS` off. {@link parseNewSubscription} validates with the same
 * schema built for the current setting.
 */
export const NewSubscriptionSchema = createSchema(false);

/**
 * The `PATCH /admin/subscriptions/:id` body as published in the OpenAPI document
 * (DESIGN 4.3): strict, at least one of `url`, `event_types`, `description`, `enabled`
 * (a `check`), built with `ALLOW_LOCAL_SUBSCRIBERS` off. {@link parseSubscriptionChanges}
 * validates with the same schema built for the current setting.
 */
export const SubscriptionChangesSchema = patchSchema(false);

/**
 * Reads a JSON object body: `Content-Type` first (415), then at most `MAX_BODY_BYTES`
 * (413), then JSON (400).
 *
 * @param request - the admin request.
 * @param env - the bindings: `MAX_BODY_BYTES`.
 * @returns the parsed object.
 * @throws {HttpError} 415 `unsupported_media_type`, 413 `payload_too_large` or
 *   400 `validation_failed` (root issue) when the body is not a JSON object.
 */
export async function readJsonObject(request: IRequest, env: Env): Promise<unknown> {
  requireJsonContentType(request.headers.get('Content-Type'));
  const limit = maxBodyBytes(env.MAX_BODY_BYTES);
  const bytes = await readCapped(request as unknown as Request, limit);
  if (bytes.byteLength > limit) {
    throw new HttpError(413, 'payload_too_large', `Request body exceeds ${limit} bytes`);
  }
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(bytes));
  } catch {
    throw invalid([{ path: '', message: 'Expected a valid UTF-8 JSON document' }]);
  }
  // valibot's object schemas accept arrays: check the input itself.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid([{ path: '', message: 'Expected a JSON object' }]);
  }
  return value;
}

/**
 * Validates a `POST /admin/subscriptions` body.
 *
 * @param body - the parsed JSON object.
 * @param allowLocal - whether loopback URLs are allowed (`ALLOW_LOCAL_SUBSCRIBERS`).
 * @returns the input with defaults applied and the URL normalized.
 * @throws {HttpError} 400 `validation_failed` with every issue (`url`, `event_types.0`, ...).
 */
export function parseNewSubscription(body: unknown, allowLocal: boolean): NewSubscriptionInput {
  const result = v.safeParse(createSchema(allowLocal), body);
  if (!result.success) throw invalid(issuesOf(result.issues));
  const { url, event_types, description, enabled } = result.output;
  return {
    url,
    eventTypes: event_types ?? null,
    description: description ?? null,
    enabled: enabled ?? true,
  };
}

/**
 * Validates a `PATCH /admin/subscriptions/:id` body: at least one of `url`,
 * `event_types` (null = every type), `description` (null clears it), `enabled`.
 *
 * @param body - the parsed JSON object.
 * @param allowLocal - whether loopback URLs are allowed (`ALLOW_LOCAL_SUBSCRIBERS`).
 * @returns the changes, with only the given fields set.
 * @throws {HttpError} 400 `validation_failed` with every issue.
 */
export function parseSubscriptionChanges(body: unknown, allowLocal: boolean): SubscriptionChanges {
  const result = v.safeParse(patchSchema(allowLocal), body);
  if (!result.success) throw invalid(issuesOf(result.issues));
  const { url, event_types, description, enabled } = result.output;
  return {
    ...(url === undefined ? {} : { url }),
    ...(event_types === undefined ? {} : { eventTypes: event_types }),
    ...(description === undefined ? {} : { description }),
    ...(enabled === undefined ? {} : { enabled }),
  };
}

/** valibot issues as `{ path, message }`: a missing field reads "Required", an unknown one "Unknown field". */
function issuesOf(issues: readonly v.BaseIssue<unknown>[]): ErrorIssue[] {
  return toIssues(issues).map((issue, index) => {
    const raw = issues[index];
    if (raw?.kind === 'schema' && raw.expected === 'never')
      return { ...issue, message: 'Unknown field' };
    const missing = raw?.kind === 'schema' && raw.input === undefined && issue.path !== '';
    return missing ? { ...issue, message: 'Required' } : issue;
  });
}

function invalid(issues: readonly ErrorIssue[]): HttpError {
  return new HttpError(400, 'validation_failed', 'The request body is invalid', { issues });
}
