import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import {
  displayLocale,
  formatCount,
  formatTick,
  formatTime,
  timeZoneChoice,
  zoneName,
} from '../format.ts';
import { html } from '../html.ts';
import type { HourCounts } from '../types.ts';
import { ErrorNotice } from './error-notice.ts';
import { TimeText } from './time-text.ts';

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
 * that follows the width of its container; the numbers are also in a table below it. Hours
 * are written on the 24-hour clock in the chosen time zone, which the axis names.
 * uPlot is loaded when the chart is first shown (its own file), so the other pages do not
 * wait for it and a failure to load or draw it is shown here, not as a blank console.
 *
 * @param props.hours - one entry per hour, oldest first.
 */
export function HourlyChart({ hours }: { hours: readonly HourCounts[] }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  // Read while rendering, so a change of time zone draws the chart again.
  const zone = timeZoneChoice();
  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    let plot: uPlot | undefined;
    let resize: ResizeObserver | undefined;
    let gone = false;
    loadUPlot()
      .then((UPlot) => {
        if (gone) return;
        plot = new UPlot(optionsFor(element, UPlot), dataOf(hours), element);
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
  }, [hours, zone]);
  return html`<div>
    <${ErrorNotice} error=${error} />
    <div class="chart" ref=${box} role="img" aria-label=${`Deliveries per hour over the last 24 hours (${zoneName()}): delivered, pending and failed`}></div>
    <details>
      <summary>Numbers by hour</summary>
      <table class="hours">
        <thead><tr><th scope="col">Hour</th>${SERIES.map((s) => html`<th scope="col">${s.label}</th>`)}</tr></thead>
        <tbody>
          ${hours.map(
            (h) =>
              html`<tr><td><${TimeText} iso=${h.hour} precision="minute" /></td>${SERIES.map((s) => html`<td>${formatCount(h[s.key])}</td>`)}</tr>`,
          )}
        </tbody>
      </table>
    </details>
  </div>`;
}

/**
 * uPlot's module, loaded once. Its module body builds a number format from
 * `navigator.language`, which throws for a tag Intl refuses (`en-US@posix` under
 * LANG=C.UTF-8); while it loads, the page's navigator reports a tag Intl accepts. The chart
 * formats its own numbers and times, so uPlot's format is never what the operator reads.
 */
async function loadUPlot(): Promise<typeof uPlot> {
  const reported = navigator.language;
  const accepted = displayLocale();
  if (reported === accepted) return (await import('uplot')).default;
  Object.defineProperty(navigator, 'language', { configurable: true, get: () => accepted });
  try {
    return (await import('uplot')).default;
  } finally {
    // The navigator's own getter (on its prototype) answers again.
    Reflect.deleteProperty(navigator, 'language');
  }
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

function optionsFor(element: HTMLElement, UPlot: typeof uPlot): uPlot.Options {
  const count = (value: number | null) => (value === null ? '—' : formatCount(value));
  return {
    ...sizeOf(element),
    // uPlot places the ticks on the hours of the zone the times are written in.
    tzDate: (seconds) =>
      timeZoneChoice() === 'utc'
        ? UPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC')
        : new Date(seconds * 1000),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
    series: [
      {
        label: 'Hour',
        value: (_u, seconds) =>
          seconds === null ? '—' : formatTime(new Date(seconds * 1000).toISOString(), 'minute'),
      },
      ...SERIES.map(({ label, stroke, dash }) => ({
        label,
        stroke,
        width: 2,
        points: { show: true, size: 5 },
        value: (_u: uPlot, value: number | null) => count(value),
        ...(dash === undefined ? {} : { dash: [...dash] }),
      })),
    ],
    axes: [
      {
        label: `Hour (${zoneName()})`,
        values: (_u, ticks) =>
          ticks.map((tick, i) => formatTick(tick, i === 0 ? null : (ticks[i - 1] ?? null))),
        size: 60,
      },
      {
        label: 'deliveries',
        size: 50,
        // Whole deliveries only: no tick at 0.5.
        values: (_u, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? count(tick) : '')),
      },
    ],
  };
}
