import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { formatTime } from '../format.ts';
import { html } from '../html.ts';
import type { HourCounts } from '../types.ts';
import { ErrorNotice } from './error-notice.ts';

/** Chart height in CSS pixels. */
const HEIGHT = 220;

/** The series, in the order of the data; the dash tells them apart without colour. */
const SERIES = [
  { key: 'delivered', label: 'Delivered', stroke: '#1a7f37', dash: undefined },
  { key: 'pending', label: 'Pending', stroke: '#9a6700', dash: [8, 4] },
  { key: 'failed', label: 'Failed', stroke: '#cf222e', dash: [2, 3] },
] as const;

/**
 * Deliveries per hour by status (delivered, pending, failed), drawn by uPlot on a canvas
 * that follows the width of its container; the numbers are also in a table below it.
 * uPlot is loaded when the chart is first shown (its own file), so the other pages do not
 * wait for it and a failure to load or draw it is shown here, not as a blank console.
 *
 * @param props.hours - one entry per hour, oldest first.
 */
export function HourlyChart({ hours }: { hours: readonly HourCounts[] }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    let plot: uPlot | undefined;
    let resize: ResizeObserver | undefined;
    let gone = false;
    import('uplot')
      .then(({ default: UPlot }) => {
        if (gone) return;
        plot = new UPlot(optionsFor(element), dataOf(hours), element);
        const drawn = plot;
        resize = new ResizeObserver(() => drawn.setSize(sizeOf(element)));
        resize.observe(element);
      })
      .catch(setError);
    return () => {
      gone = true;
      resize?.disconnect();
      plot?.destroy();
    };
  }, [hours]);
  return html`<div>
    <${ErrorNotice} error=${error} />
    <div class="chart" ref=${box} role="img" aria-label="Deliveries per hour over the last 24 hours: delivered, pending and failed"></div>
    <details>
      <summary>Numbers by hour</summary>
      <table class="hours">
        <thead><tr><th scope="col">Hour</th>${SERIES.map((s) => html`<th scope="col">${s.label}</th>`)}</tr></thead>
        <tbody>
          ${hours.map(
            (h) =>
              html`<tr><td>${formatTime(h.hour).slice(0, 16)}</td>${SERIES.map((s) => html`<td>${h[s.key]}</td>`)}</tr>`,
          )}
        </tbody>
      </table>
    </details>
  </div>`;
}

function sizeOf(element: HTMLElement): { width: number; height: number } {
  return { width: Math.max(element.clientWidth, 280), height: HEIGHT };
}

function dataOf(hours: readonly HourCounts[]): uPlot.AlignedData {
  return [
    hours.map((h) => Date.parse(h.hour) / 1000),
    ...SERIES.map((series) => hours.map((h) => h[series.key])),
  ];
}

function optionsFor(element: HTMLElement): uPlot.Options {
  return {
    ...sizeOf(element),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
    series: [
      { label: 'Hour' },
      ...SERIES.map(({ label, stroke, dash }) => ({
        label,
        stroke,
        width: 2,
        points: { show: true, size: 5 },
        ...(dash === undefined ? {} : { dash: [...dash] }),
      })),
    ],
    axes: [{}, { label: 'deliveries', size: 50 }],
  };
}
