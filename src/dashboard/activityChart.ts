import type { MinutePoint } from '../metrics/minuteStats.js';
import { h, raw, type Safe } from './html.js';

const SERIES = [
  ['delivered', '#2f7d32'],
  ['refused', '#c62828'],
  ['held', '#b26a00'],
] as const;

/**
 * Orders delivered, refused (dead-lettered) and held per minute over 24 hours, as an inline SVG:
 * no script, no chart library. One x unit per minute.
 */
export function activityChart(
  points: readonly MinutePoint[],
  latency: { p50Ms: number | undefined; p95Ms: number | undefined },
): Safe {
  const height = 100;
  const max = Math.max(1, ...points.flatMap((p) => [p.delivered, p.refused, p.held]));
  const totals = Object.fromEntries(SERIES.map(([name]) => [name, points.reduce((sum, p) => sum + p[name], 0)]));
  const lines = SERIES.map(([name, color]) => {
    const coords = points.map((p, i) => `${i},${(height - (p[name] / max) * (height - 4)).toFixed(1)}`).join(' ');
    return `<polyline fill="none" stroke="${color}" stroke-width="2" vector-effect="non-scaling-stroke" points="${coords}"/>`;
  }).join('');
  const ms = (v: number | undefined) => (v === undefined ? '-' : latencyText(v));
  return h`<div class="cards" data-test="activity">
<div class="card" style="flex:1;min-width:480px"><div>orders per minute, last 24 h (peak ${max}/min):
${SERIES.map(([name, color]) => h` <span style="color:${color}">■ ${name} ${totals[name]}</span>`)}</div>
<svg viewBox="0 0 ${points.length} ${height}" preserveAspectRatio="none" width="100%" height="100" role="img" aria-label="orders per minute">${raw(lines)}</svg>
<div style="display:flex;justify-content:space-between"><small>24 h ago</small><small>now</small></div></div>
<div class="card">request latency p50<b data-test="p50">${ms(latency.p50Ms)}</b><small>last hour</small></div>
<div class="card">p95<b>${ms(latency.p95Ms)}</b><small>last hour</small></div></div>`;
}

/** A latency bound as text; Infinity is past the histogram's last bucket. */
function latencyText(ms: number): string {
  return ms === Infinity ? '> 60 s' : `≤ ${ms} ms`;
}
