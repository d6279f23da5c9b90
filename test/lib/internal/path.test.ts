import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { path } from '../../../lib/internal/path.ts';
import { ReferenceSchema } from '../../../lib/schemas/common.ts';

describe('path', () => {
  it('should encode each value as one segment', () => {
    expect(path`/payments/verify/${'ref/1?x=#'}`).toBe('/payments/verify/ref%2F1%3Fx%3D%23');
  });

  it('should refuse dot segments, which URL parsing would resolve away', () => {
    expect(() => path`/refunds/${'..'}`).toThrow(RangeError);
    expect(() => path`/refunds/${'.'}`).toThrow(RangeError);
    expect(path`/refunds/${'...'}`).toBe('/refunds/...');
  });

  it('should refuse a lone surrogate with the same RangeError, not a URIError', () => {
    expect(() => path`/payments/verify/${'ref\udb80x'}`).toThrow(RangeError);
    expect(path`/payments/verify/${'\ud83d\ude00'}`).toBe('/payments/verify/%F0%9F%98%80');
  });
});

describe('ReferenceSchema', () => {
  it('should refuse references that could never travel in a path', () => {
    expect(
      ['.', '..', '...', 'a/b'].map((ref) => v.safeParse(ReferenceSchema, ref).success),
    ).toEqual([false, false, true, true]);
  });
});
