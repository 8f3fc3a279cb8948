/** One series per day, as lib/console/activity.ts computes it. */
export interface ChartSeries {
  key: string;
  label: string;
  days: Array<{ day: string; count: number }>;
  total: number;
}

/** Users holding each factor, out of all users. */
export interface FactorCounts {
  users: number;
  passkey: number;
  totp: number;
  securityKey: number;
  recoveryCodes: number;
}

const W = 300;
const H = 64;

/**
 * One series as a server-rendered bar chart (inline SVG, no script): a bar per UTC day, the SVG
 * titled and described for assistive technology, the numbers also in a visually hidden table.
 */
export function ActivityChart({ series, tone = "indigo" }: { series: ChartSeries; tone?: "indigo" | "red" | "amber" | "emerald" }) {
  const max = Math.max(1, ...series.days.map((d) => d.count));
  const slot = W / series.days.length;
  const bar = Math.max(1, slot - 2);
  const peak = series.days.reduce((best, d) => (d.count > best.count ? d : best), series.days[0]);
  const id = `activity-${series.key}`;
  const fill = { indigo: "fill-indigo-500", red: "fill-red-500", amber: "fill-amber-500", emerald: "fill-emerald-500" }[tone];
  const first = series.days[0]?.day ?? "";
  const last = series.days[series.days.length - 1]?.day ?? "";
  return (
    // A column whose plot sits at the bottom: charts side by side stretch to one height, so a label
    // that wraps to two lines does not push its plot below its neighbours'.
    <figure className="relative flex min-w-0 flex-col rounded-lg border border-slate-200 bg-white p-4" data-testid={`chart-${series.key}`}>
      <figcaption className="flex items-baseline justify-between gap-2">
        <span className="text-sm font-medium text-slate-700">{series.label}</span>
        <span className="text-2xl font-semibold text-slate-900">{series.total}</span>
      </figcaption>
      <div className="mt-auto pt-2">
        <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" className="h-16 w-full" role="img" aria-labelledby={`${id}-title ${id}-desc`}>
          <title id={`${id}-title`}>{`${series.label} per day, ${first} to ${last} (UTC)`}</title>
          <desc id={`${id}-desc`}>{series.total === 0 ? "None in the last 30 days." : `${series.total} in total; the most, ${peak.count}, on ${peak.day}.`}</desc>
          <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} className="stroke-slate-300" strokeWidth="1" />
          {series.days.map((d, i) => {
            const h = d.count === 0 ? 0 : Math.max(2, (d.count / max) * (H - 4));
            return (
              <rect key={d.day} x={i * slot + 1} y={H - h} width={bar} height={h} className={fill}>
                <title>{`${d.day}: ${d.count}`}</title>
              </rect>
            );
          })}
        </svg>
        <div className="mt-1 flex justify-between text-xs text-slate-600" aria-hidden="true">
          <span>{first.slice(5)}</span>
          <span>{last.slice(5)}</span>
        </div>
      </div>
      {/* A table does not shrink to the 1 px of sr-only (it grows to its cells, 1,378 px at 1280 px wide, and the page scrolled sideways): the wrapper is what is hidden, and it clips the table. */}
      <div className="sr-only">
        <table>
          <caption>{`${series.label} per day (UTC)`}</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">{series.label}</th>
            </tr>
          </thead>
          <tbody>
            {series.days.map((d) => (
              <tr key={d.day}>
                <td>{d.day}</td>
                <td>{d.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}

/** Users with each factor, out of all users, as labelled bars with the numbers in text. */
export function FactorAdoptionChart({ factors }: { factors: FactorCounts }) {
  const rows: Array<[string, number]> = [
    ["Passkey", factors.passkey],
    ["Authenticator app (TOTP)", factors.totp],
    ["Security key", factors.securityKey],
    ["Recovery codes", factors.recoveryCodes],
  ];
  const pct = (n: number) => (factors.users === 0 ? 0 : Math.round((n / factors.users) * 100));
  return (
    <figure className="rounded-lg border border-slate-200 bg-white p-4" data-testid="chart-factors">
      <figcaption className="text-sm font-medium text-slate-700">
        Factor adoption <span className="font-normal text-slate-600">(users with each factor, of {factors.users})</span>
      </figcaption>
      <ul className="mt-3 space-y-2">
        {rows.map(([label, n]) => (
          <li key={label}>
            <div className="flex justify-between text-xs text-slate-700">
              <span>{label}</span>
              <span>
                {n} of {factors.users} ({pct(n)}%)
              </span>
            </div>
            <svg viewBox="0 0 100 6" preserveAspectRatio="none" className="mt-1 h-2 w-full" aria-hidden="true">
              <rect x="0" y="0" width="100" height="6" rx="3" className="fill-slate-100" />
              {n > 0 ? <rect x="0" y="0" width={Math.max(2, pct(n))} height="6" rx="3" className="fill-emerald-500" /> : null}
            </svg>
          </li>
        ))}
      </ul>
    </figure>
  );
}
