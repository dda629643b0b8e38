// @ts-check
// The Charts view: the server's own figures over the last 15 minutes (admin/metrics/history,
// sampled every few seconds by the server), drawn as SVG line charts by svg.js.
import { admin } from './ari.js';
import { $ } from './dom.js';
import { lineChart } from './svg.js';

const SERIES = [
  ['calls', 'Active calls', ''],
  ['calls_per_second', 'Calls per second', '/s'],
  ['events_per_second', 'Events per second', '/s'],
  ['cpu_percent', 'CPU', ' %'],
  ['memory_mb', 'Memory', ' MB'],
];

export async function loadCharts() {
  const answer = await admin('metrics/history');
  const samples = answer.samples ?? [];
  const charts = SERIES.map(([key, title, unit]) => {
    const points = samples.map((s) => ({ t: s.t, v: Number(s[key]) || 0 }));
    const chart = lineChart(title, points, { unit, min: key === 'cpu_percent' ? 10 : 1 });
    chart.setAttribute('data-series', key);
    chart.setAttribute('data-points', String(points.length));
    chart.setAttribute('data-last', String(points.length ? points[points.length - 1].v : 0));
    chart.setAttribute('data-max', String(Math.max(0, ...points.map((p) => p.v))));
    return chart;
  });
  $('charts').replaceChildren(...charts);
}
