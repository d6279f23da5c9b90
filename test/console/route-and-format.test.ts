import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { timeFieldError } from '../../console/src/components/time-field.ts';
import {
  answerOf,
  chooseTimeZone,
  displayLocale,
  formatCount,
  formatTick,
  formatTime,
  fromLocalInput,
  prettyJson,
  timeZoneChoice,
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
  // A zone half an hour off UTC, so a local time cannot pass for a UTC one (Node reads TZ
  // again when it changes).
  const zone = process.env.TZ;
  process.env.TZ = 'Asia/Kolkata';
  afterEach(() => chooseTimeZone('utc'));
  afterAll(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  describe('formatTime', () => {
    it('should write a time in UTC by default, 24-hour, naming the zone', () => {
      expect(timeZoneChoice()).toBe('utc');
      expect(formatTime('2026-01-02T15:04:05.678Z')).toBe('2026-01-02 15:04:05 UTC');
      expect(formatTime('2026-01-02T15:04:05Z', 'minute')).toBe('2026-01-02 15:04 UTC');
      expect(formatTime('garbage')).toBe('garbage');
    });

    it('should write it in local time with its offset once local time is chosen', () => {
      chooseTimeZone('local');
      expect(formatTime('2026-01-02T20:04:05Z')).toBe('2026-01-03 01:34:05 UTC+05:30');
    });
  });

  describe('formatTick', () => {
    it('should write the hour on the 24-hour clock, the date under the first tick and a new day', () => {
      const day = Date.parse('2026-01-02T22:00:00Z') / 1000;
      expect(formatTick(day, null)).toBe('22:00\n2026-01-02');
      expect(formatTick(day + 3600, day)).toBe('23:00');
      expect(formatTick(day + 7200, day + 3600)).toBe('00:00\n2026-01-03');
    });
  });

  describe('toLocalInput and fromLocalInput', () => {
    it('should read and write a time field in the 24-hour format, in UTC by default', () => {
      expect(fromLocalInput('2026-11-24 14:30')).toBe('2026-11-24T14:30:00.000Z');
      expect(fromLocalInput(' 2026-11-24 23:30:15 ')).toBe('2026-11-24T23:30:15.000Z');
      expect(fromLocalInput('2026-11-24T14:30')).toBe('2026-11-24T14:30:00.000Z');
      expect(toLocalInput('2026-11-24T21:30:59.000Z')).toBe('2026-11-24 21:30');
      expect(fromLocalInput('')).toBe('');
      expect(fromLocalInput('   ')).toBe('');
      expect(toLocalInput('not a time')).toBe('');
    });

    it.each([
      '2026-11-24',
      '11/24/2026 02:30 PM',
      '2026-11-24 2:30',
      '2026-11-24 14:30 UTC',
      '2026-02-30 10:00',
      '2026-11-24 24:00',
      '2026-11-24 14:60',
      '2026-11-24 14:30:60',
    ])('should refuse %j as not a time', (typed) => {
      expect(fromLocalInput(typed)).toBeNull();
    });

    it('should read and write it in local time once chosen', () => {
      chooseTimeZone('local');
      expect(fromLocalInput('2026-11-24 14:30')).toBe('2026-11-24T09:00:00.000Z');
      expect(toLocalInput('2026-11-24T09:00:00.000Z')).toBe('2026-11-24 14:30');
      expect(fromLocalInput('2026-11-24 24:00')).toBeNull();
    });
  });

  describe('timeFieldError', () => {
    it('should name the field, the text, the format and the zone, and pass a time or nothing', () => {
      expect(timeFieldError('Received from', ' yesterday ')).toBe(
        'Received from: "yesterday" is not a time. Write it as YYYY-MM-DD HH:MM (seconds optional), in UTC.',
      );
      expect(timeFieldError('Received from', '2026-11-24 14:30')).toBeNull();
      expect(timeFieldError('Received from', '')).toBeNull();
    });
  });

  describe('displayLocale', () => {
    it('should give Intl a tag it accepts whatever the browser reports', () => {
      const reported = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
      try {
        for (const [languages, expected] of [
          [['en-US@posix'], 'en-US'],
          [['und'], 'en-US'],
          [['not a tag', 'de-DE'], 'de-DE'],
          [[], 'en-US'],
        ] as const) {
          Object.defineProperty(globalThis, 'navigator', {
            configurable: true,
            value: { languages, language: languages[0] },
          });
          expect(displayLocale()).toBe(expected);
          expect(() => new Intl.NumberFormat(displayLocale())).not.toThrow();
        }
      } finally {
        if (reported !== undefined) Object.defineProperty(globalThis, 'navigator', reported);
      }
    });
  });

  describe('formatCount', () => {
    it('should group thousands with commas', () => {
      expect([0, 999, 1000, 12345, 1234567, -1234].map(formatCount)).toEqual([
        '0',
        '999',
        '1,000',
        '12,345',
        '1,234,567',
        '-1,234',
      ]);
    });
  });

  it('should indent JSON and leave other text as it is', () => {
    expect(prettyJson('{"a":{"b":1}}')).toBe('{\n  "a": {\n    "b": 1\n  }\n}');
    expect(prettyJson('not json')).toBe('not json');
  });

  it('should name an answer by its status', () => {
    expect(answerOf(500)).toBe('HTTP 500');
    expect(answerOf(null)).toBe('no answer');
  });
});
