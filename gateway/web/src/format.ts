// Number and time formatting, in one place so every view says "1,234.5"
// and "2 min" the same way.

const num = new Intl.NumberFormat("en", { maximumFractionDigits: 2 });
const score = new Intl.NumberFormat("en", { maximumFractionDigits: 4 });
const pct = new Intl.NumberFormat("en", { style: "percent", maximumFractionDigits: 1 });
const usd = new Intl.NumberFormat("en", { style: "currency", currency: "USD", maximumFractionDigits: 4 });
const compact = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });
// The API's days are UTC dates: shown as such whatever the reader's zone,
// or a day would be labelled with its neighbour's date west of Greenwich.
const dayShort = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });
const dayLong = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });

export const fmt = {
  num: (n: number | null | undefined) => (n == null ? "—" : num.format(n)),
  score: (n: number) => score.format(n),
  /** compact is for an axis' labels: 750, 5,000, 12K, 3M (short from five digits up). */
  compact: (n: number) => (Math.abs(n) >= 10_000 ? compact.format(n) : num.format(n)),
  /** usd shows dollars to the hundredth of a cent: a task's cost is often under one. */
  usd: (n: number | null | undefined) => (n == null ? "—" : usd.format(n)),
  /** pct formats a 0..1 ratio as a percentage. */
  pct: (r: number | null | undefined) => (r == null ? "—" : pct.format(r)),
  seconds(s: number | null | undefined): string {
    if (s == null) return "—";
    if (s < 1) return `${num.format(s * 1000)} ms`;
    if (s < 120) return `${num.format(s)} s`;
    if (s < 7200) return `${num.format(s / 60)} min`;
    return `${num.format(s / 3600)} h`;
  },
  /** time shows an RFC 3339 instant in the reader's time zone. */
  time(iso: string | null | undefined): string {
    if (!iso) return "—";
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
  },
  /** day shows a YYYY-MM-DD (UTC) date as "25 Nov", or "25 Nov 2025" with its year. */
  day(date: string, withYear = false): string {
    const d = new Date(`${date}T00:00:00Z`);
    if (Number.isNaN(d.getTime())) return date;
    return (withYear ? dayLong : dayShort).format(d);
  },
  /** duration shows a span of seconds in its largest whole units: "3 d 4 h", "12 min". */
  duration(s: number): string {
    if (s < 60) return `${Math.max(0, Math.round(s))} s`;
    const units: [string, number][] = [
      ["d", 86400],
      ["h", 3600],
      ["min", 60],
    ];
    const parts: string[] = [];
    let rest = Math.round(s / 60) * 60;
    for (const [name, size] of units) {
      const n = Math.floor(rest / size);
      if (n > 0 && parts.length < 2) parts.push(`${n} ${name}`);
      rest -= n * size;
    }
    return parts.join(" ");
  },
  /**
   * span shows a statistic of durations (a median, a percentile) in one
   * unit, rounded: "45 s", "12 min", "3.2 h", "4.5 d"; one decimal below 10
   * of a unit, whole from 10, and "< 1 s" under a second. Where duration
   * spells one span exactly ("3 d 4 h"), a median of spans is read at a
   * glance and its minutes would be noise.
   */
  span(s: number | null | undefined): string {
    if (s == null) return "—";
    if (s < 1) return "< 1 s";
    if (Math.round(s) < 60) return `${Math.round(s)} s`;
    // One decimal below 10 of a unit, whole from 10.
    const round = (v: number) => (v < 9.95 ? Math.round(v * 10) / 10 : Math.round(v));
    // A unit is kept while its rounded value stays under the next unit, so
    // 59.7 min is "1 h", never "60 min".
    if (round(s / 60) < 60) return `${num.format(round(s / 60))} min`;
    if (round(s / 3600) < 24) return `${num.format(round(s / 3600))} h`;
    return `${num.format(round(s / 86400))} d`;
  },
  label: (s: string) => s.replace(/_/g, " "),
};
