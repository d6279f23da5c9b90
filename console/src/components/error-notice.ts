import { ApiError, type ApiIssue } from '../api.ts';
import { html } from '../html.ts';

/** Props of {@link ErrorNotice}. */
interface ErrorNoticeProps {
  /** What failed; nothing is shown while it is `undefined` or `null`. */
  readonly error: unknown;
  /** Issues already shown beside their fields, by `path`, left out of the list here. */
  readonly shownAt?: readonly string[];
}

/**
 * A failure as the API worded it: its `message`, then its code, HTTP status and request
 * id (to find the gateway's log line), then any issue not shown beside a field.
 */
export function ErrorNotice({ error, shownAt = [] }: ErrorNoticeProps) {
  if (error === undefined || error === null) return null;
  const message = error instanceof Error ? error.message : String(error);
  const api = error instanceof ApiError ? error : undefined;
  const issues = (api?.issues ?? []).filter((issue) => !shownAt.includes(fieldOf(issue)));
  const details = api === undefined ? [] : [api.code];
  if (api !== undefined && api.status > 0) details.push(`HTTP ${api.status}`);
  if (api?.requestId) details.push(`request ${api.requestId}`);
  return html`<div class="notice error" role="alert">
    <p>${message}</p>
    ${
      issues.length > 0 &&
      html`<ul>
      ${issues.map((issue) => html`<li><code>${issue.path || 'body'}</code>: ${issue.message}</li>`)}
    </ul>`
    }
    ${details.length > 0 && html`<p class="meta">${details.join(' · ')}</p>`}
  </div>`;
}

/**
 * The field an issue belongs to: the first segment of its path (`event_types.0` is about
 * `event_types`).
 *
 * @param issue - an issue of the error body.
 */
export function fieldOf(issue: ApiIssue): string {
  return issue.path.split('.')[0] ?? '';
}
