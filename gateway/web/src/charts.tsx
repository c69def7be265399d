// Small inline SVG charts, drawn here rather than by a charting library:
// a few horizontal bars need no dependency, and every chart states its
// numbers in text too (on the bars and in its accessible name), so colour
// never carries meaning alone and a screen reader hears the values.

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
}

// Drawn at 480 × n user units, shown at up to 30rem (480 px), so text
// keeps its CSS size on a desktop and shrinks only on a narrow phone.
const WIDTH = 480;
const LABEL_W = 130;
const VALUE_W = 110;
const BAR_H = 16;
const GAP = 4;
const GROUP_GAP = 12;

export function BarChart({ id, title, groups, format, max }: BarChartProps) {
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
        <desc id={`${id}-desc`}>{summary || "No data yet."}</desc>
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
