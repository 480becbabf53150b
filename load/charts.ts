/** Line charts as standalone SVG, for the report (no chart library: a few axes and polylines). */

export interface Series {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
  readonly dashed?: boolean;
}

export interface ChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
  readonly logX?: boolean;
  readonly logY?: boolean;
  /** Horizontal reference lines (e.g. a limit). */
  readonly rules?: readonly { readonly y: number; readonly label: string }[];
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
const WIDTH = 760;
const HEIGHT = 420;
const MARGIN = { left: 70, right: 190, top: 40, bottom: 55 };

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (n: number) =>
  Math.abs(n) >= 1000
    ? n.toLocaleString('en-US', { maximumFractionDigits: 0 })
    : String(Number(n.toPrecision(3)));

/** 1-2-5 ticks over [lo, hi] for a log axis; about six evenly spaced "nice" ones for a linear one. */
function ticks(lo: number, hi: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++)
      for (const m of [1, 2, 5]) {
        const v = m * 10 ** e;
        if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
      }
    return out;
  }
  const raw = (hi - lo) / 6 || 1;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step / 1e6; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

function domain(values: number[], log: boolean): [number, number] {
  const positive = log ? values.filter((v) => v > 0) : values;
  if (positive.length === 0) return log ? [1, 10] : [0, 1];
  let lo = Math.min(...positive);
  let hi = Math.max(...positive);
  if (log) return [10 ** Math.floor(Math.log10(lo)), 10 ** Math.ceil(Math.log10(hi))];
  lo = Math.min(0, lo);
  if (hi === lo) hi = lo + 1;
  return [lo, hi * 1.05];
}

export function lineChart(o: ChartOptions): string {
  const xs = o.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = [...o.series.flatMap((s) => s.points.map((p) => p[1])), ...(o.rules ?? []).map((r) => r.y)];
  const [x0, x1] = domain(xs, o.logX ?? false);
  const [y0, y1] = domain(ys, o.logY ?? false);
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const scale = (v: number, lo: number, hi: number, log: boolean) =>
    log ? (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) : (v - lo) / (hi - lo);
  const X = (v: number) => MARGIN.left + scale(v, x0, x1, o.logX ?? false) * plotW;
  const Y = (v: number) => MARGIN.top + plotH - scale(v, y0, y1, o.logY ?? false) * plotH;
  const drawable = ([x, y]: readonly [number, number]) =>
    Number.isFinite(x) && Number.isFinite(y) && (!o.logX || x > 0) && (!o.logY || y > 0);

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15">${escapeXml(o.title)}</text>`,
  ];
  for (const t of ticks(x0, x1, o.logX ?? false)) {
    parts.push(
      `<line x1="${X(t)}" x2="${X(t)}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#eee"/>`,
      `<text x="${X(t)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${fmt(t)}</text>`,
    );
  }
  for (const t of ticks(y0, y1, o.logY ?? false)) {
    parts.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${Y(t)}" y2="${Y(t)}" stroke="#eee"/>`,
      `<text x="${MARGIN.left - 6}" y="${Y(t) + 4}" text-anchor="end">${fmt(t)}</text>`,
    );
  }
  parts.push(
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 12}" text-anchor="middle">${escapeXml(o.xLabel)}${o.logX ? ' (log)' : ''}</text>`,
    `<text transform="translate(16 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(o.yLabel)}${o.logY ? ' (log)' : ''}</text>`,
  );
  for (const rule of o.rules ?? []) {
    parts.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${Y(rule.y)}" y2="${Y(rule.y)}" stroke="#000" stroke-dasharray="2 3"/>`,
      `<text x="${MARGIN.left + 4}" y="${Y(rule.y) - 4}">${escapeXml(rule.label)}</text>`,
    );
  }
  o.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const points = s.points.filter(drawable);
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    if (points.length > 1)
      parts.push(
        `<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${points.map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(' ')}"/>`,
      );
    for (const [x, y] of points.length <= 60 ? points : [])
      parts.push(`<circle cx="${X(x).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="3" fill="${color}"/>`);
    const ly = MARGIN.top + 10 + i * 18;
    parts.push(
      `<line x1="${WIDTH - MARGIN.right + 12}" x2="${WIDTH - MARGIN.right + 36}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`,
      `<text x="${WIDTH - MARGIN.right + 42}" y="${ly + 4}">${escapeXml(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
