// The console's client of the admin API: same origin, `Authorization: Bearer <token>`,
// every failure an ApiError carrying the API's own `message`.
import type {
  Delivery,
  DeliveryCounts,
  DeliveryListItem,
  EventDetail,
  EventSummary,
  EventTypeInfo,
  HourCounts,
  Page,
  RecoveryJob,
  RecoveryPreview,
  RecoveryRequest,
  ReEnableRequest,
  ReplayRequest,
  Subscription,
  SubscriptionInput,
  TestEventSent,
} from './types.ts';

/** One problem with a request, as the error body lists it (`path` '' for the body). */
export interface ApiIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * An answer of the admin API other than 2xx, or no answer at all. `message` is the API's
 * own (its error body's `message`), so the page shows what the gateway said.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** The HTTP status; 0 when the gateway could not be reached. */
  readonly status: number;
  /** The error body's stable `code` (`network_error` when nothing answered). */
  readonly code: string;
  readonly issues: readonly ApiIssue[];
  readonly requestId: string | null;

  /**
   * @param status - the HTTP status, 0 for no answer.
   * @param code - the error body's `code`.
   * @param message - the error body's `message`.
   * @param details - the body's `issues` and the answer's request id.
   */
  constructor(
    status: number,
    code: string,
    message: string,
    details: { issues?: readonly ApiIssue[]; requestId?: string | null; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
    this.status = status;
    this.code = code;
    this.issues = details.issues ?? [];
    this.requestId = details.requestId ?? null;
  }
}

/**
 * A path with each interpolated value percent-encoded as one segment, so an id holding
 * `/` or `?` cannot reach another route.
 *
 * @example
 * ```ts
 * path`/admin/events/${id}/replay`; // '/admin/events/evt%2F1/replay' for 'evt/1'
 * ```
 * @internal Exported for its test, which checks the escaping without a server.
 */
export function path(strings: TemplateStringsArray, ...values: readonly string[]): string {
  return strings.reduce(
    (built, text, index) =>
      built + text + (index < values.length ? encodeURIComponent(values[index] ?? '') : ''),
    '',
  );
}

/** Query parameters; `undefined` and '' values are left out. */
export type Query = Readonly<Record<string, string | number | undefined>>;

/** `GET /admin/events` filters and paging. */
export interface EventQuery {
  event_type?: string;
  status?: string;
  outcome?: string;
  from?: string;
  to?: string;
  reference?: string;
  reference_prefix?: string;
  event_id_prefix?: string;
  page_size?: number;
  cursor?: string;
}

/** `GET /admin/deliveries` filters and paging. */
export interface DeliveryQuery {
  status?: string;
  subscription_id?: string;
  event_id?: string;
  page_size?: number;
  cursor?: string;
}

interface Envelope<T> {
  data: T;
  next_cursor?: string | null;
}

/**
 * The admin API, one method per route, signed in with one admin token.
 *
 * @example
 * ```ts
 * const api = new AdminApi(token, () => signOut());
 * const { data, next_cursor } = await api.listEvents({ status: 'unconfirmed' });
 * ```
 */
export class AdminApi {
  readonly #token: string;
  readonly #onUnauthorized: (error: ApiError) => void;

  /**
   * @param token - the admin token, sent as `Authorization: Bearer <token>`.
   * @param onUnauthorized - called on a 401 (the token is wrong or was changed), before
   *   the error is thrown.
   */
  constructor(token: string, onUnauthorized: (error: ApiError) => void = () => {}) {
    this.#token = token;
    this.#onUnauthorized = onUnauthorized;
  }

  /** `GET /admin/events`: events newest first, one page. */
  listEvents(query: EventQuery): Promise<Page<EventSummary>> {
    return this.#page('/admin/events', { ...query });
  }

  /** `GET /admin/events/:id` with its raw body, deliveries and attempts. */
  getEvent(id: string): Promise<EventDetail> {
    return this.#data('GET', path`/admin/events/${id}`);
  }

  /** `POST /admin/events/:id/replay`: the ids of the deliveries queued. */
  replayEvent(id: string, body: ReplayRequest): Promise<{ delivery_ids: string[] }> {
    return this.#data('POST', path`/admin/events/${id}/replay`, { body });
  }

  /** `GET /admin/deliveries`: deliveries newest first, one page. */
  listDeliveries(query: DeliveryQuery): Promise<Page<DeliveryListItem>> {
    return this.#page('/admin/deliveries', { ...query });
  }

  /** `GET /admin/deliveries/counts`. */
  countDeliveries(): Promise<DeliveryCounts> {
    return this.#data('GET', '/admin/deliveries/counts');
  }

  /** `GET /admin/deliveries/hourly`: the last `hours` hours, oldest first. */
  async deliveriesByHour(hours: number): Promise<HourCounts[]> {
    const answer = await this.#data<{ hours: HourCounts[] }>('GET', '/admin/deliveries/hourly', {
      query: { hours },
    });
    return answer.hours;
  }

  /** `POST /admin/deliveries/:id/retry`: the delivery, pending and due now. */
  retryDelivery(id: string): Promise<Delivery> {
    return this.#data('POST', path`/admin/deliveries/${id}/retry`);
  }

  /** `POST /admin/deliveries/recover/preview`: how many deliveries the filter matches now. */
  previewRecovery(body: RecoveryRequest): Promise<RecoveryPreview> {
    return this.#data('POST', '/admin/deliveries/recover/preview', { body });
  }

  /** `POST /admin/deliveries/recover`: the job started (or the running one with that filter). */
  startRecovery(body: RecoveryRequest): Promise<RecoveryJob> {
    return this.#data('POST', '/admin/deliveries/recover', { body });
  }

  /** `GET /admin/deliveries/recover`: the most recently started recovery jobs, newest first. */
  listRecoveries(): Promise<RecoveryJob[]> {
    return this.#data('GET', '/admin/deliveries/recover');
  }

  /** `GET /admin/event-types`: the event types the relay knows, in catalog order. */
  listEventTypes(): Promise<EventTypeInfo[]> {
    return this.#data('GET', '/admin/event-types');
  }

  /** `GET /admin/subscriptions`: every subscription, newest first. */
  listSubscriptions(): Promise<Subscription[]> {
    return this.#data('GET', '/admin/subscriptions');
  }

  /** `POST /admin/subscriptions`: the new subscription with its `secret`. */
  createSubscription(input: SubscriptionInput): Promise<Subscription> {
    return this.#data('POST', '/admin/subscriptions', { body: input });
  }

  /** `PATCH /admin/subscriptions/:id`; a re-enable answers `requeued` when it re-queued. */
  updateSubscription(
    id: string,
    changes: Partial<SubscriptionInput> | ReEnableRequest,
  ): Promise<Subscription> {
    return this.#data('PATCH', path`/admin/subscriptions/${id}`, { body: changes });
  }

  /** `POST /admin/subscriptions/:id/rotate-secret`: the subscription with its new `secret`. */
  rotateSecret(id: string): Promise<Subscription> {
    return this.#data('POST', path`/admin/subscriptions/${id}/rotate-secret`);
  }

  /** `POST /admin/subscriptions/:id/test`: a signed test event to this subscription only. */
  sendTestEvent(id: string): Promise<TestEventSent> {
    return this.#data('POST', path`/admin/subscriptions/${id}/test`);
  }

  /** `DELETE /admin/subscriptions/:id`. */
  async deleteSubscription(id: string): Promise<void> {
    await this.#send('DELETE', path`/admin/subscriptions/${id}`);
  }

  async #data<T>(
    method: string,
    route: string,
    options: { query?: Query; body?: unknown } = {},
  ): Promise<T> {
    return ((await this.#send(method, route, options)) as Envelope<T>).data;
  }

  async #page<T>(route: string, query: Query): Promise<Page<T>> {
    const answer = (await this.#send('GET', route, { query })) as Envelope<T[]>;
    return { data: answer.data, next_cursor: answer.next_cursor ?? null };
  }

  async #send(
    method: string,
    route: string,
    { query = {}, body }: { query?: Query; body?: unknown } = {},
  ): Promise<unknown> {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== '') search.set(name, String(value));
    }
    const url = search.size === 0 ? route : `${route}?${search}`;
    const headers: Record<string, string> = { Authorization: `Bearer ${this.#token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        cache: 'no-store',
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (cause) {
      throw new ApiError(0, 'network_error', `The gateway did not answer ${method} ${route}`, {
        cause,
      });
    }
    if (response.status === 204) return undefined;
    const parsed = await response.json().catch(() => undefined);
    if (response.ok && parsed !== undefined) return parsed;
    const error = errorOf(method, route, response, parsed);
    if (error.status === 401) this.#onUnauthorized(error);
    throw error;
  }
}

// The error body's fields when the answer has one, else a message naming the request.
function errorOf(method: string, route: string, response: Response, body: unknown): ApiError {
  const requestId = response.headers.get('X-Request-Id');
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof fields.message === 'string') {
    const issues = Array.isArray(fields.issues) ? (fields.issues as ApiIssue[]) : [];
    const code = typeof fields.code === 'string' ? fields.code : 'error';
    return new ApiError(response.status, code, fields.message, { issues, requestId });
  }
  const message = response.ok
    ? `${method} ${route} answered something that is not JSON`
    : `${method} ${route} answered HTTP ${response.status}`;
  return new ApiError(response.status, 'unexpected_answer', message, { requestId });
}
