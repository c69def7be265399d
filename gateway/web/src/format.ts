// Number and time formatting, in one place so every view says "1,234.5"
// and "2 min" the same way.

const num = new Intl.NumberFormat("en", { maximumFractionDigits: 2 });
const score = new Intl.NumberFormat("en", { maximumFractionDigits: 4 });
const pct = new Intl.NumberFormat("en", { style: "percent", maximumFractionDigits: 1 });

export const fmt = {
  num: (n: number | null | undefined) => (n == null ? "—" : num.format(n)),
  score: (n: number) => score.format(n),
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
  label: (s: string) => s.replace(/_/g, " "),
};
