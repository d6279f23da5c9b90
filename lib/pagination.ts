/** One page of a list (page from 1, page_size 1..100; docs/payments-api.md, "Limits"). */
export interface Page<T> {
  /** This page's records, in the service's order. */
  items: T[];
  /** Items across all pages, as the service counts them. */
  total: number;
  /** 1-based page number. */
  page: number;
  /** Records per page, as the service answers it (its `pageSize` or `page_size`). */
  pageSize: number;
}

/** Loads page `page` (1-based) of a list. */
export type PageLoader<T> = (page: number) => Promise<Page<T>>;

/**
 * A list call: iterate every item across pages with `for await`, or take pages
 * explicitly with `.page(n)` / `.pages()`. Nothing is fetched until it is used.
 *
 * @example
 * ```ts
 * for await (const transfer of client.transfers.list({ status: 'success' })) console.log(transfer.reference);
 * const first = await client.transfers.list().page(1);
 * const some = await client.transfers.list().toArray({ limit: 250 });
 * ```
 */
export class PagedList<T> implements AsyncIterable<T> {
  readonly #load: PageLoader<T>;
  readonly #firstPage: number;

  /**
   * @param load - fetches one page.
   * @param firstPage - where iteration starts. @default 1
   */
  constructor(load: PageLoader<T>, firstPage = 1) {
    this.#load = load;
    this.#firstPage = firstPage;
  }

  /**
   * Fetches one page.
   *
   * @param page - 1-based page number.
   * @throws the errors of the underlying call (APIError, ConnectionError, ...).
   */
  page(page: number): Promise<Page<T>> {
    return this.#load(page);
  }

  /** Walks the pages in order from the first, stopping after the last (by `total`) or an empty page. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    for (let number = this.#firstPage; ; number++) {
      const page = await this.#load(number);
      if (page.items.length === 0) return;
      yield page;
      if (page.page * page.pageSize >= page.total) return;
    }
  }

  /** Every item across all pages. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items;
  }

  /**
   * Collects items into an array, at most `limit` of them (a limit is required, so a
   * large history is never loaded into memory by accident).
   *
   * @param options.limit - the most items to return (a positive integer).
   * @throws {RangeError} when `limit` is missing or not a positive integer.
   */
  async toArray(options: { limit: number }): Promise<T[]> {
    const limit = options?.limit;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(
        'toArray needs { limit }: a positive integer bound on the items collected',
      );
    }
    const items: T[] = [];
    for await (const item of this) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }
}
