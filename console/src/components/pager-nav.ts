import type { Pager } from '../hooks.ts';
import { html } from '../html.ts';

/** Props of {@link PagerNav}. */
interface PagerNavProps {
  readonly pager: Pager;
  /** The shown page's `next_cursor`; `null` on the last page. */
  readonly nextCursor: string | null | undefined;
  /** Names the list, for screen readers (`Event pages`). */
  readonly label: string;
}

/** Newer and Older buttons over a keyset-paginated list, and the page number. */
export function PagerNav({ pager, nextCursor, label }: PagerNavProps) {
  return html`<nav class="pager" aria-label=${label}>
    <button type="button" disabled=${pager.page === 1} onClick=${pager.newer}>Newer</button>
    <span>Page ${pager.page}</span>
    <button
      type="button"
      disabled=${nextCursor == null}
      onClick=${() => nextCursor != null && pager.older(nextCursor)}
    >
      Older
    </button>
  </nav>`;
}
