// Small inline SVG charts, drawn here rather than by a charting library:
// horizontal bars and a daily line chart need no dependency (uPlot, the
// smallest well-kept one, would nearly double the bundle and draws on a
// canvas a screen reader cannot read), and every chart states its numbers
// in text too (on the bars, in its accessible name, in a table of the
// days), so colour never carries meaning alone and a screen reader hears
// the values.

import { fmt } from "./format";

/** TREND_DAYS is how many days the daily charts show, today (UTC) last. */
export const TREND_DAYS = 30;

export interface Bar {
  name: string;
  value: number | null;
}

export interface BarGroup {
  label: string;
  bars: Bar[];
}

interface BarChartProps {
  id: string;
  title: string;
  groups: BarGroup[];
  format: (v: number | null) => string;
  /** max fixes the scale (1 for rates); by default the largest value. */
  max?: number;
  /** empty is said instead of the chart when there is no group. */
  empty: string;
}

// Drawn at 480 × n user units, shown at up to 30rem (480 px), so text
// keeps its CSS size on a desktop and shrinks only on a narrow phone.
const WIDTH = 480;
const LABEL_W = 130;
const VALUE_W = 110;
const BAR_H = 16;
const GAP = 4;
const GROUP_GAP = 12;

export function BarChart({ id, title, groups, format, max, empty }: BarChartProps) {
  if (groups.length === 0) return <EmptyChart title={title} empty={empty} />;
  const values = groups.flatMap((g) => g.bars.map((b) => b.value ?? 0));
  const top = max ?? Math.max(0, ...values);
  const scale = (v: number | null) => (top > 0 && v ? (Math.min(v, top) / top) * (WIDTH - LABEL_W - VALUE_W) : 0);
  const series = groups[0]?.bars.map((b) => b.name) ?? [];
  const summary = groups
    .map((g) => `${g.label}: ${g.bars.map((b) => `${b.name} ${format(b.value)}`).join(", ")}`)
    .join("; ");

  let y = 0;
  const rows = groups.map((g) => {
    const groupY = y;
    y += g.bars.length * (BAR_H + GAP) + GROUP_GAP;
    return (
      <g key={g.label} transform={`translate(0 ${groupY})`}>
        <text x={0} y={BAR_H - 4} class="chart-label">
          {g.label}
        </text>
        {g.bars.map((b, i) => {
          const w = scale(b.value);
          const by = i * (BAR_H + GAP);
          return (
            <g key={b.name}>
              <rect x={LABEL_W} y={by} width={Math.max(w, 1)} height={BAR_H} class={`bar series-${i}`} rx={2} />
              <text x={LABEL_W + w + 4} y={by + BAR_H - 4} class="chart-value">
                {series.length > 1 ? `${b.name} ${format(b.value)}` : format(b.value)}
              </text>
            </g>
          );
        })}
      </g>
    );
  });
  const height = Math.max(y - GROUP_GAP, BAR_H);

  return (
    <figure class="chart">
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${height}`}
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        preserveAspectRatio="xMinYMin meet"
      >
        <desc id={`${id}-desc`}>{summary}</desc>
        {rows}
      </svg>
      {series.length > 1 && (
        <ul class="legend" aria-hidden="true">
          {series.map((s, i) => (
            <li key={s}>
              <span class={`swatch series-${i}`} />
              {s}
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}

/** EmptyChart keeps a chart's caption and says in words why nothing is drawn. */
function EmptyChart({ title, empty }: { title: string; empty: string }) {
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <p class="empty">{empty}</p>
    </figure>
  );
}

export interface Series {
  name: string;
  /** values has one value a day; null is a day without one, drawn as a gap. */
  values: (number | null)[];
}

/** Column is more of each day's numbers, shown in the chart's table only. */
export interface Column {
  name: string;
  values: string[];
}

interface LineChartProps {
  id: string;
  title: string;
  /** days are the dates (YYYY-MM-DD, UTC), oldest first, one per value. */
  days: string[];
  series: Series[];
  format: (v: number | null) => string;
  /** tick formats the value axis' labels; format by default. */
  tick?: (v: number) => string;
  /** steps are the value axis' allowed steps (TIME_STEPS); round decimals by default. */
  steps?: number[];
  /** max fixes the top of the scale (1 for rates); by default a round number above the data. */
  max?: number;
  /** reference is a dashed line at a value that means something (a reserve ratio of 1). */
  reference?: { value: number; label: string };
  /** empty is said instead of the chart when no day has a value. */
  empty: string;
  columns?: Column[];
}

const LINE_H = 180;
const PAD = { left: 60, right: 24, top: 12, bottom: 24 };
/** The time axis is labelled every TICK_EVERY days, counted back from the last. */
const TICK_EVERY = 7;

/**
 * TIME_STEPS are the steps of a time axis, in seconds: round on a clock
 * (30 s, 5 min, 1 h), where decimal steps would give 3.33 min.
 */
export const TIME_STEPS = [
  0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
  7200, 10800, 21600, 43200, 86400,
];

/** niceTicks are 0 and a few round steps (from steps, when given) up to top or just above it. */
function niceTicks(top: number, steps?: number[], count = 4): number[] {
  if (!(top > 0)) return [0, 1];
  const raw = top / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step =
    steps?.find((st) => st >= raw) ?? ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const n = Math.ceil(top / step - 1e-9);
  // toPrecision drops the float noise of i * step (0.30000000000000004).
  return Array.from({ length: n + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

// One decimal keeps the SVG small and the build's output stable.
const r1 = (v: number) => Math.round(v * 10) / 10;

/**
 * Marker is a day's point; its shape (circle, square, triangle) tells the
 * series apart without colour, and it alone shows a day with no neighbour.
 */
function Marker({ k, x, y, label }: { k: number; x: number; y: number; label?: string }) {
  const cls = `point series-${k}`;
  const tip = label ? <title>{label}</title> : null;
  if (k % 3 === 1) {
    return (
      <rect class={cls} x={r1(x - 3.5)} y={r1(y - 3.5)} width={7} height={7}>
        {tip}
      </rect>
    );
  }
  if (k % 3 === 2) {
    return (
      <path class={cls} d={`M${r1(x)} ${r1(y - 4.5)}L${r1(x + 4.5)} ${r1(y + 3.5)}L${r1(x - 4.5)} ${r1(y + 3.5)}Z`}>
        {tip}
      </path>
    );
  }
  return (
    <circle class={cls} cx={r1(x)} cy={r1(y)} r={3.5}>
      {tip}
    </circle>
  );
}

/** linePath joins consecutive days with values; a null day breaks the line. */
function linePath(values: (number | null)[], x: (i: number) => number, y: (v: number) => number): string {
  let d = "";
  let open = false;
  values.forEach((v, i) => {
    if (v == null) {
      open = false;
      return;
    }
    d += `${open ? "L" : "M"}${r1(x(i))} ${r1(y(v))}`;
    open = true;
  });
  return d;
}

function describe(s: Series, days: string[], format: (v: number | null) => string): string {
  const seen = s.values.flatMap((v, i) => (v == null ? [] : [{ v, day: fmt.day(days[i]) }]));
  const last = seen[seen.length - 1];
  if (!last) return `${s.name}: no value`;
  if (seen.length === 1) return `${s.name}: ${format(last.v)} on ${last.day}, no other day`;
  const lo = seen.reduce((a, b) => (b.v < a.v ? b : a));
  const hi = seen.reduce((a, b) => (b.v > a.v ? b : a));
  return (
    `${s.name} on ${seen.length} of ${days.length} days: lowest ${format(lo.v)} (${lo.day}), ` +
    `highest ${format(hi.v)} (${hi.day}), latest ${format(last.v)} (${last.day})`
  );
}

/**
 * LineChart draws one value a day for one or more series on a shared
 * scale from 0. A day without a value is a gap in the line, never a 0;
 * the accessible name sums each series up and a table, behind a
 * disclosure, lists every day.
 */
export function LineChart({
  id,
  title,
  days,
  series,
  format,
  tick,
  steps,
  max,
  reference,
  empty,
  columns = [],
}: LineChartProps) {
  const values = series.flatMap((s) => s.values.filter((v): v is number => v != null));
  if (days.length === 0 || values.length === 0) return <EmptyChart title={title} empty={empty} />;

  // Headroom above a reference line, so its label never sits on the frame.
  const ticks = niceTicks(max ?? Math.max(...values, (reference?.value ?? 0) * 1.1), steps);
  const top = ticks[ticks.length - 1];
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = LINE_H - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + ((i + 0.5) * plotW) / days.length;
  const y = (v: number) => PAD.top + plotH - (Math.min(v, top) / top) * plotH;
  // 0 is 0 in any unit ("0 ms" on a time axis in minutes misleads).
  const label = (v: number) => (v === 0 ? "0" : (tick ?? format)(v));
  const lastDay = days[days.length - 1];

  const summary =
    `UTC days from ${fmt.day(days[0], true)} to ${fmt.day(lastDay, true)}. ` +
    series.map((s) => describe(s, days, format)).join("; ") +
    "." +
    (reference ? ` A dashed line marks ${reference.label}.` : "");

  return (
    <figure class="chart">
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${LINE_H}`}
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        preserveAspectRatio="xMinYMin meet"
      >
        <desc id={`${id}-desc`}>{summary}</desc>
        {ticks.map((t) => (
          <g key={t}>
            <line class={t === 0 ? "axis" : "grid"} x1={PAD.left} x2={WIDTH - PAD.right} y1={r1(y(t))} y2={r1(y(t))} />
            <text x={PAD.left - 6} y={r1(y(t) + 4)} class="chart-label" text-anchor="end">
              {label(t)}
            </text>
          </g>
        ))}
        {days.map((d, i) =>
          (days.length - 1 - i) % TICK_EVERY === 0 ? (
            <text key={d} x={r1(x(i))} y={LINE_H - 6} class="chart-label" text-anchor="middle">
              {fmt.day(d)}
            </text>
          ) : null,
        )}
        {reference && (
          <g>
            <line
              class="reference"
              x1={PAD.left}
              x2={WIDTH - PAD.right}
              y1={r1(y(reference.value))}
              y2={r1(y(reference.value))}
            />
            <text x={PAD.left + 4} y={r1(y(reference.value) - 4)} class="chart-label">
              {reference.label}
            </text>
          </g>
        )}
        {series.map((s, k) => {
          const d = linePath(s.values, x, y);
          return (
            <g key={s.name} data-series={s.name}>
              {d && <path class={`line series-${k}`} d={d} />}
              {s.values.map((v, i) =>
                v == null ? null : (
                  <Marker key={days[i]} k={k} x={x(i)} y={y(v)} label={`${fmt.day(days[i])}: ${s.name} ${format(v)}`} />
                ),
              )}
            </g>
          );
        })}
      </svg>
      {series.length > 1 && (
        <ul class="legend" aria-hidden="true">
          {series.map((s, k) => (
            <li key={s.name}>
              <svg class="key" viewBox="0 0 28 10">
                <line class={`line series-${k}`} x1={1} y1={5} x2={27} y2={5} />
                <Marker k={k} x={14} y={5} />
              </svg>
              {s.name}
            </li>
          ))}
        </ul>
      )}
      <details class="chart-data">
        <summary>
          Numbers by day<span class="visually-hidden">: {title}</span>
        </summary>
        <div class="table-wrap" role="region" aria-labelledby={`${id}-caption`} tabIndex={0}>
          <table>
            <caption id={`${id}-caption`}>{title}, by UTC day, oldest first; — is a day without a value</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {[...series, ...columns].map((c) => (
                  <th key={c.name} scope="col" class="num">
                    {c.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {days.map((d, i) => (
                <tr key={d}>
                  <th scope="row">
                    <time dateTime={d}>{fmt.day(d, true)}</time>
                  </th>
                  {series.map((s) => (
                    <td key={s.name} class="num">
                      {format(s.values[i])}
                    </td>
                  ))}
                  {columns.map((c) => (
                    <td key={c.name} class="num">
                      {c.values[i]}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
