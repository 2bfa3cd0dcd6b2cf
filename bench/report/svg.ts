/** A small, dependency-free SVG line chart for the benchmark report. */

export interface Series {
  name: string;
  points: Array<[number, number]>;
  color: string;
  dashed?: boolean;
  /** Draw a marker at every point (sparse series). */
  markers?: boolean;
  /** Draw steps (a CDF) instead of straight segments. */
  step?: boolean;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Lines under the plot naming the commit, the machine and the date. */
  footer: string[];
  xLog?: boolean;
  yLog?: boolean;
  yMin?: number;
  yMax?: number;
  xMin?: number;
  width?: number;
  height?: number;
}

const esc = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Round tick values for [lo, hi] on a linear axis. */
function linearTicks(lo: number, hi: number, count = 6): number[] {
  const span = hi - lo || 1;
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= count) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.round(v * 1e6) / 1e6);
  return out;
}

/** 1, 2, 5 × powers of ten within [lo, hi] on a log axis. */
function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e += 1) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
    }
  }
  return out;
}

function fmt(v: number): string {
  if (v >= 1000) return `${Math.round(v / 100) / 10}k`.replace('.0k', 'k');
  if (v >= 10) return String(Math.round(v));
  return String(Math.round(v * 100) / 100);
}

/** Renders the chart as a standalone SVG document. */
export function lineChart(options: ChartOptions): string {
  const width = options.width ?? 760;
  const height = options.height ?? 440;
  const margin = { left: 70, right: 190, top: 44, bottom: 58 + 16 * options.footer.length };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const all = options.series
    .flatMap((s) => s.points)
    .filter(
      ([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!options.xLog || x > 0) && (!options.yLog || y > 0),
    );
  const xs = all.map(([x]) => x);
  const ys = all.map(([, y]) => y);
  let xLo = options.xMin ?? Math.min(...xs);
  let xHi = Math.max(...xs);
  let yLo = options.yMin ?? (options.yLog ? Math.min(...ys) : 0);
  let yHi = options.yMax ?? Math.max(...ys);
  if (!all.length) [xLo, xHi, yLo, yHi] = [1, 10, options.yLog ? 1 : 0, 10];
  if (options.yLog) [yLo, yHi] = [10 ** Math.floor(Math.log10(yLo)), 10 ** Math.ceil(Math.log10(yHi))];
  else yHi = yHi * 1.05 || 1;
  if (options.xLog) [xLo, xHi] = [10 ** Math.floor(Math.log10(xLo)), Math.max(xHi * 1.1, xLo * 2)];
  if (xHi === xLo) xHi = xLo + 1;
  const tx = (x: number) =>
    margin.left +
    (options.xLog ? (Math.log10(x) - Math.log10(xLo)) / (Math.log10(xHi) - Math.log10(xLo)) : (x - xLo) / (xHi - xLo)) *
      plotW;
  const ty = (y: number) =>
    margin.top +
    plotH -
    (options.yLog ? (Math.log10(y) - Math.log10(yLo)) / (Math.log10(yHi) - Math.log10(yLo)) : (y - yLo) / (yHi - yLo)) *
      plotH;
  const xTicks = options.xLog ? logTicks(xLo, xHi) : linearTicks(xLo, xHi);
  const yTicks = options.yLog ? logTicks(yLo, yHi) : linearTicks(yLo, yHi);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  parts.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  parts.push(
    `<text x="${margin.left}" y="26" font-size="16" font-weight="bold" fill="#222">${esc(options.title)}</text>`,
  );
  for (const t of yTicks) {
    parts.push(
      `<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${ty(t).toFixed(1)}" y2="${ty(t).toFixed(1)}" stroke="#e4e4e4"/>`,
    );
    parts.push(
      `<text x="${margin.left - 6}" y="${(ty(t) + 4).toFixed(1)}" text-anchor="end" fill="#444">${fmt(t)}</text>`,
    );
  }
  for (const t of xTicks) {
    parts.push(
      `<line y1="${margin.top}" y2="${margin.top + plotH}" x1="${tx(t).toFixed(1)}" x2="${tx(t).toFixed(1)}" stroke="#f0f0f0"/>`,
    );
    parts.push(
      `<text x="${tx(t).toFixed(1)}" y="${margin.top + plotH + 16}" text-anchor="middle" fill="#444">${fmt(t)}</text>`,
    );
  }
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#888"/>`,
  );
  parts.push(
    `<text x="${margin.left + plotW / 2}" y="${margin.top + plotH + 36}" text-anchor="middle" fill="#222">${esc(options.xLabel)}</text>`,
  );
  parts.push(
    `<text transform="translate(18 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#222">${esc(options.yLabel)}</text>`,
  );
  const clip = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  options.series.forEach((s, i) => {
    const pts = s.points.filter(
      ([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!options.xLog || x > 0) && (!options.yLog || y > 0),
    );
    const coords: string[] = [];
    pts.forEach(([x, y], j) => {
      const px = clip(tx(x), margin.left, margin.left + plotW);
      const py = clip(ty(y), margin.top, margin.top + plotH);
      if (s.step && j > 0)
        coords.push(`${px.toFixed(1)},${clip(ty(pts[j - 1]![1]), margin.top, margin.top + plotH).toFixed(1)}`);
      coords.push(`${px.toFixed(1)},${py.toFixed(1)}`);
    });
    if (coords.length)
      parts.push(
        `<polyline fill="none" stroke="${s.color}" stroke-width="2" ${s.dashed ? 'stroke-dasharray="6 4" ' : ''}points="${coords.join(' ')}"/>`,
      );
    if (s.markers)
      for (const [x, y] of pts)
        parts.push(`<circle cx="${tx(x).toFixed(1)}" cy="${ty(y).toFixed(1)}" r="3.5" fill="${s.color}"/>`);
    const ly = margin.top + 10 + i * 20;
    const lx = margin.left + plotW + 14;
    parts.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2" ${s.dashed ? 'stroke-dasharray="6 4"' : ''}/>`,
    );
    parts.push(`<text x="${lx + 30}" y="${ly + 4}" fill="#222">${esc(s.name)}</text>`);
  });
  options.footer.forEach((line, i) => {
    parts.push(
      `<text x="${margin.left}" y="${height - 10 - 16 * (options.footer.length - 1 - i)}" font-size="11" fill="#555">${esc(line)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Points of an empirical CDF of `values`: (value, share of values ≤ it). */
export function cdfPoints(values: readonly number[]): Array<[number, number]> {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.map((v, i) => [v, (i + 1) / sorted.length]);
}
