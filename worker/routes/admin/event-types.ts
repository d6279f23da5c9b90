/**
 * The admin API's event-type catalog (`GET /admin/event-types`) and the rule that keeps
 * subscriptions to it: an `event_types` entry the catalog does not list is refused, with the
 * closest known type suggested, unless the body sets `allow_custom_event_types: true`.
 */
import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { jsonResponse } from '../../http/respond.ts';
import {
  closestEventType,
  dataJsonSchema,
  EVENT_TYPE_CATALOG,
  KNOWN_EVENT_TYPES,
} from '../../relay/event-catalog.ts';

/** Path of the event-type catalog. */
export const ADMIN_EVENT_TYPES_PATH = '/admin/event-types';

/** The body flag that lets a subscription list types the catalog does not know. */
const ALLOW_CUSTOM_FIELD = 'allow_custom_event_types';

// Converted once per isolate: the catalog is fixed at build time.
let catalogView: readonly Record<string, unknown>[] | undefined;

/**
 * `GET /admin/event-types`: every event type the relay knows, in catalog order (the
 * specification's, the sandbox's, then the relay's own operational events).
 *
 * @returns 200 `{ status: 'success', data: [{ type, origin, description, data_schema }] }`,
 *   `origin` one of `spec`, `sandbox`, `relay`, `data_schema` the JSON Schema (2020-12) of
 *   the event's `data`, derived from the SDK's webhook schemas.
 */
export function listEventTypes(_request: IRequest): Response {
  catalogView ??= EVENT_TYPE_CATALOG.map((entry) => ({
    type: entry.type,
    origin: entry.origin,
    description: entry.description,
    data_schema: dataJsonSchema(entry.data),
  }));
  return jsonResponse({ status: 'success', data: catalogView });
}

/** What an unknown type's issue says, with a suggestion when one is close. */
function unknownTypeMessage(type: string): string {
  const suggestion = closestEventType(type);
  return (
    `Unknown event type ${JSON.stringify(type)}` +
    (suggestion === undefined ? '' : `: did you mean ${suggestion}?`) +
    ` (GET ${ADMIN_EVENT_TYPES_PATH} lists the known types; set ${ALLOW_CUSTOM_FIELD} to true to subscribe to a custom type)`
  );
}

/** The body fields the rule reads. */
interface EventTypesBody {
  readonly event_types?: readonly string[] | null | undefined;
  readonly allow_custom_event_types?: boolean | undefined;
}

/**
 * A valibot action for a subscription body: one issue per `event_types` entry the catalog
 * does not list, at its path (`event_types.0`), suggesting the closest known type, unless
 * `allow_custom_event_types` is `true`. It runs when `event_types` and the flag have no
 * issues of their own, so one answer lists every problem. Its `message` describes the rule
 * in the OpenAPI document.
 */
export function knownEventTypesCheck<T extends EventTypesBody>(): v.RawCheckAction<T> & {
  message: string;
} {
  const check = v.rawCheck<T>(({ dataset, addIssue }) => {
    const blocked = dataset.issues?.some(
      (issue) =>
        issue.path === undefined ||
        issue.path[0]?.key === 'event_types' ||
        issue.path[0]?.key === ALLOW_CUSTOM_FIELD,
    );
    // Past that guard the value is the object, its two fields valid.
    const input = dataset.value as EventTypesBody & Record<string, unknown>;
    if (blocked || input.allow_custom_event_types === true || !Array.isArray(input.event_types)) {
      return;
    }
    const types: readonly string[] = input.event_types;
    types.forEach((type, index) => {
      if (KNOWN_EVENT_TYPES.has(type)) return;
      addIssue({
        message: unknownTypeMessage(type),
        path: [
          { type: 'object', origin: 'value', input, key: 'event_types', value: types },
          { type: 'array', origin: 'value', input: [...types], key: index, value: type },
        ],
      });
    });
  });
  return Object.assign(check, {
    message:
      `Each event_types entry is a type GET ${ADMIN_EVENT_TYPES_PATH} lists, ` +
      `unless ${ALLOW_CUSTOM_FIELD} is true`,
  });
}
