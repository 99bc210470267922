/** Small hand-written SVG charts: each has a title and a text alternative (a table or a description). */

const W = 560;
const H = 220;
const PAD = { l: 48, r: 12, t: 12, b: 36 };
const COLORS = ['#2563eb', '#d97706', '#059669', '#dc2626', '#7c3aed', '#0891b2', '#4b5563', '#db2777'];

const fmt = (v: number) => (Math.abs(v) >= 1000 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(3));

function ticks(min: number, max: number, n = 4): number[] {
  if (max === min) return [min];
  return Array.from({ length: n + 1 }, (_, i) => min + ((max - min) * i) / n);
}

/**
 * Whole-number ticks from 0 for counts up to `max`: a step of 1, 2 or 5 × 10^k giving at most
 * `most` steps, the last tick at or above `max` (so each label is distinct and drawn at its height).
 */
export function countTicks(max: number, most = 4): number[] {
  const top = Math.max(1, Math.ceil(max));
  const raw = top / most;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(1, [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? 10 * mag);
  return Array.from({ length: Math.ceil(top / step) + 1 }, (_, i) => i * step);
}

/** Bars, one per label (events per day), on whole-number ticks. */
export function BarChart({ title, data }: { title: string; data: { label: string; value: number }[] }) {
  const scale = countTicks(Math.max(0, ...data.map((d) => d.value)));
  // The axis ends at the last tick: bars and labels share one scale.
  const max = scale[scale.length - 1] ?? 1;
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const bw = data.length ? iw / data.length : iw;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${data.map((d) => `${d.label} ${d.value}`).join(', ')}`}>
        {scale.map((t) => (
          <g key={t}>
            <line x1={PAD.l} x2={W - PAD.r} y1={PAD.t + ih - (t / max) * ih} y2={PAD.t + ih - (t / max) * ih} className="grid" />
            <text x={PAD.l - 6} y={PAD.t + ih - (t / max) * ih + 4} textAnchor="end" className="axis">
              {t.toLocaleString()}
            </text>
          </g>
        ))}
        {data.map((d, i) => {
          const h = (d.value / max) * ih;
          return (
            <g key={d.label}>
              <rect x={PAD.l + i * bw + 2} y={PAD.t + ih - h} width={Math.max(1, bw - 4)} height={h} fill={COLORS[0]}>
                <title>{`${d.label}: ${d.value}`}</title>
              </rect>
              {i % Math.ceil(data.length / 7) === 0 ? (
                <text x={PAD.l + i * bw + bw / 2} y={H - 14} textAnchor="middle" className="axis">
                  {d.label.slice(5)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption>{title}</figcaption>
    </figure>
  );
}

export interface Series {
  name: string;
  points: { x: number; y: number }[];
}

/** Lines over a shared x axis (training loss and validation by step), each series scaled to its own range when `independent`. */
export function LineChart({ title, series, xLabel, independent }: { title: string; series: Series[]; xLabel: string; independent?: boolean }) {
  const all = series.flatMap((s) => s.points);
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const xmin = Math.min(...all.map((p) => p.x), 0);
  const xmax = Math.max(...all.map((p) => p.x), 1);
  const range = (pts: { y: number }[]): [number, number] => {
    const lo = Math.min(...pts.map((p) => p.y));
    const hi = Math.max(...pts.map((p) => p.y));
    return lo === hi ? [lo - 1e-6, hi + 1e-6] : [lo, hi];
  };
  const shared: [number, number] = all.length ? range(all) : [0, 1];
  const lastValue = (s: Series) => {
    const last = s.points[s.points.length - 1];
    return last ? fmt(last.y) : 'none';
  };
  const x = (v: number) => PAD.l + ((v - xmin) / (xmax - xmin || 1)) * iw;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${series.map((s) => `${s.name} ${s.points.length} points, last ${lastValue(s)}`).join('; ')}`}>
        {!independent
          ? ticks(shared[0], shared[1]).map((t) => {
              const y = PAD.t + ih - ((t - shared[0]) / (shared[1] - shared[0] || 1)) * ih;
              return (
                <g key={t}>
                  <line x1={PAD.l} x2={W - PAD.r} y1={y} y2={y} className="grid" />
                  <text x={PAD.l - 6} y={y + 4} textAnchor="end" className="axis">
                    {fmt(t)}
                  </text>
                </g>
              );
            })
          : null}
        <line x1={PAD.l} x2={W - PAD.r} y1={PAD.t + ih} y2={PAD.t + ih} className="grid" />
        <text x={PAD.l + iw / 2} y={H - 6} textAnchor="middle" className="axis">
          {xLabel}
        </text>
        {series.map((s, k) => {
          const [lo, hi] = independent && s.points.length ? range(s.points) : shared;
          const y = (v: number) => PAD.t + ih - ((v - lo) / (hi - lo || 1)) * ih;
          const d = s.points.map((p, i) => `${i ? 'L' : 'M'}${x(p.x).toFixed(1)},${y(p.y).toFixed(1)}`).join(' ');
          return (
            <g key={s.name}>
              <path d={d} fill="none" stroke={COLORS[k % COLORS.length]} strokeWidth={2} />
              {s.points.map((p) => (
                <circle key={p.x} cx={x(p.x)} cy={y(p.y)} r={3} fill={COLORS[k % COLORS.length]}>
                  <title>{`${s.name} ${xLabel} ${p.x}: ${fmt(p.y)}`}</title>
                </circle>
              ))}
            </g>
          );
        })}
      </svg>
      <figcaption>
        {title}
        <span className="legend">
          {series.map((s, k) => (
            <span key={s.name}>
              <span className="swatch" style={{ background: COLORS[k % COLORS.length] }} aria-hidden="true" />
              {s.name}
              {independent ? ' (own scale)' : ''}
            </span>
          ))}
        </span>
      </figcaption>
    </figure>
  );
}

/** Grouped bars: one group per metric, one bar per version, each group scaled to its best value. */
export function GroupedBars({ title, groups, keys }: { title: string; groups: { name: string; values: Record<string, number | null> }[]; keys: string[] }) {
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const gw = groups.length ? iw / groups.length : iw;
  const bw = (gw - 12) / Math.max(1, keys.length);
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${groups.map((g) => `${g.name} ${keys.map((k) => `${k} ${g.values[k] ?? 'none'}`).join(', ')}`).join('; ')}`}>
        <line x1={PAD.l} x2={W - PAD.r} y1={PAD.t + ih} y2={PAD.t + ih} className="grid" />
        {groups.map((g, i) => {
          const max = Math.max(1e-9, ...keys.map((k) => Math.abs(g.values[k] ?? 0)));
          return (
            <g key={g.name}>
              {keys.map((k, j) => {
                const v = g.values[k] ?? 0;
                const h = (Math.abs(v) / max) * ih;
                return (
                  <rect key={k} x={PAD.l + i * gw + 6 + j * bw} y={PAD.t + ih - h} width={Math.max(1, bw - 2)} height={h} fill={COLORS[j % COLORS.length]}>
                    <title>{`${g.name}, version ${k}: ${g.values[k] === null || g.values[k] === undefined ? 'none' : fmt(v)}`}</title>
                  </rect>
                );
              })}
              <text x={PAD.l + i * gw + gw / 2} y={H - 14} textAnchor="middle" className="axis">
                {g.name.replace(/_at_/, '@')}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>
        {title}
        <span className="legend">
          {keys.map((k, j) => (
            <span key={k}>
              <span className="swatch" style={{ background: COLORS[j % COLORS.length] }} aria-hidden="true" />v{k}
            </span>
          ))}
        </span>
      </figcaption>
    </figure>
  );
}

/** A 95 % interval on a shared axis around zero (experiment lifts). */
export function IntervalBar({ low, high, point, label }: { low: number | null; high: number | null; point: number | null; label: string }) {
  if (low === null || high === null || point === null) return <span className="muted">–</span>;
  const span = Math.max(Math.abs(low), Math.abs(high), Math.abs(point), 0.01) * 1.1;
  const x = (v: number) => 60 + (v / span) * 55;
  return (
    <svg viewBox="0 0 120 16" width={120} height={16} role="img" aria-label={`${label}: ${(point * 100).toFixed(1)}%, 95% interval ${(low * 100).toFixed(1)}% to ${(high * 100).toFixed(1)}%`}>
      <line x1={60} x2={60} y1={0} y2={16} className="grid" />
      <line x1={x(low)} x2={x(high)} y1={8} y2={8} stroke={low > 0 ? '#059669' : high < 0 ? '#dc2626' : '#4b5563'} strokeWidth={3} />
      <circle cx={x(point)} cy={8} r={3.5} fill="#111827" />
    </svg>
  );
}
