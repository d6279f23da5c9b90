import { describe, expect, it } from 'vitest';
import { type Page, PagedList } from '../../lib/pagination.ts';

// A list of `total` numbered items served in pages of `pageSize`, recording the pages asked for.
function numbers(total: number, pageSize: number) {
  const asked: number[] = [];
  const load = async (page: number): Promise<Page<number>> => {
    asked.push(page);
    const start = (page - 1) * pageSize;
    const items = Array.from(
      { length: Math.max(0, Math.min(pageSize, total - start)) },
      (_, i) => start + i,
    );
    return { items, total, page, pageSize };
  };
  return { list: new PagedList(load), asked };
}

describe('PagedList', () => {
  describe('for await', () => {
    it('should yield every item across pages and stop at the total', async () => {
      const { list, asked } = numbers(25, 10);
      const seen: number[] = [];
      for await (const n of list) seen.push(n);
      expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i));
      expect(asked).toEqual([1, 2, 3]);
    });

    it('should not ask past an exact last page', async () => {
      const { list, asked } = numbers(20, 10);
      let count = 0;
      for await (const _ of list) count++;
      expect(count).toBe(20);
      expect(asked).toEqual([1, 2]);
    });

    it('should stop on an empty page even when total says more', async () => {
      const list = new PagedList(async (page) => ({
        items: page === 1 ? [1] : [],
        total: 99,
        page,
        pageSize: 1,
      }));
      const seen: number[] = [];
      for await (const n of list) seen.push(n);
      expect(seen).toEqual([1]);
    });
  });

  describe('page', () => {
    it('should fetch the one page asked for', async () => {
      const { list, asked } = numbers(25, 10);
      const page = await list.page(3);
      expect(page).toEqual({ items: [20, 21, 22, 23, 24], total: 25, page: 3, pageSize: 10 });
      expect(asked).toEqual([3]);
    });
  });

  describe('pages', () => {
    it('should yield pages with their totals', async () => {
      const { list } = numbers(3, 2);
      const pages: Page<number>[] = [];
      for await (const page of list.pages()) pages.push(page);
      expect(pages.map((page) => [page.page, page.items])).toEqual([
        [1, [0, 1]],
        [2, [2]],
      ]);
    });
  });

  describe('toArray', () => {
    it('should stop at the limit without loading further pages', async () => {
      const { list, asked } = numbers(1000, 10);
      expect(await list.toArray({ limit: 15 })).toEqual(Array.from({ length: 15 }, (_, i) => i));
      expect(asked).toEqual([1, 2]);
    });

    it('should require a positive integer limit', async () => {
      const { list, asked } = numbers(5, 10);
      await expect(list.toArray({} as { limit: number })).rejects.toThrow(RangeError);
      await expect(list.toArray({ limit: 0 })).rejects.toThrow(RangeError);
      expect(asked).toEqual([]);
    });
  });
});
