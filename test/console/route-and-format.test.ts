import { describe, expect, it } from 'vitest';
import {
  answerOf,
  formatTime,
  fromLocalInput,
  parseEventTypes,
  prettyJson,
  toLocalInput,
} from '../../console/src/format.ts';
import { hrefOf, parseRoute } from '../../console/src/route.ts';

describe('console routes', () => {
  describe('parseRoute', () => {
    it('should read the event list with its filters', () => {
      const route = parseRoute('#/events?status=unconfirmed&reference=order-1');
      expect(route.page).toBe('events');
      expect(route.page === 'events' && Object.fromEntries(route.filters)).toEqual({
        status: 'unconfirmed',
        reference: 'order-1',
      });
    });

    it('should read an event id, decoded', () => {
      expect(parseRoute('#/events/evt%2F1%20a')).toEqual({ page: 'event', id: 'evt/1 a' });
    });

    it('should read an event link that is not valid percent-encoding as the invalid page', () => {
      for (const hash of ['#/events/%', '#/events/%E0%A4%A', '#/events/evt%ZZ']) {
        expect(parseRoute(hash)).toEqual({ page: 'invalid', fragment: hash });
      }
      expect(hrefOf(parseRoute('#/events/%'))).toBe('#/events/%');
    });

    it('should read the other pages and default to the event list', () => {
      expect(parseRoute('#/subscriptions')).toEqual({ page: 'subscriptions' });
      expect(parseRoute('#/deliveries')).toEqual({ page: 'deliveries' });
      expect(parseRoute('').page).toBe('events');
      expect(parseRoute('#/nowhere').page).toBe('events');
    });
  });

  describe('hrefOf', () => {
    it('should write a fragment that parseRoute reads back', () => {
      const event = { page: 'event', id: 'evt/1?x' } as const;
      expect(hrefOf(event)).toBe('#/events/evt%2F1%3Fx');
      expect(parseRoute(hrefOf(event))).toEqual(event);
      const filters = new URLSearchParams({ event_type: 'charge_success' });
      expect(hrefOf({ page: 'events', filters })).toBe('#/events?event_type=charge_success');
      expect(hrefOf({ page: 'events', filters: new URLSearchParams() })).toBe('#/events');
    });
  });
});

describe('console formats', () => {
  it('should turn a datetime-local value into UTC and back', () => {
    const iso = fromLocalInput('2026-11-24T14:30');
    expect(iso).toBe(new Date(2026, 10, 24, 14, 30).toISOString());
    expect(toLocalInput(iso)).toBe('2026-11-24T14:30');
    expect(fromLocalInput('')).toBe('');
    expect(toLocalInput('not a time')).toBe('');
  });

  it('should write a time to the second in local time', () => {
    expect(formatTime(new Date(2026, 0, 2, 3, 4, 5).toISOString())).toBe('2026-01-02 03:04:05');
    expect(formatTime('garbage')).toBe('garbage');
  });

  it('should indent JSON and leave other text as it is', () => {
    expect(prettyJson('{"a":{"b":1}}')).toBe('{\n  "a": {\n    "b": 1\n  }\n}');
    expect(prettyJson('not json')).toBe('not json');
  });

  it('should read a comma-separated list of event types, empty meaning every type', () => {
    expect(parseEventTypes(' charge_success, ,disbursement_success ')).toEqual([
      'charge_success',
      'disbursement_success',
    ]);
    expect(parseEventTypes('  ')).toBeNull();
  });

  it('should name an answer by its status', () => {
    expect(answerOf(500)).toBe('HTTP 500');
    expect(answerOf(null)).toBe('no answer');
  });
});
