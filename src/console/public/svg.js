// @ts-check
// SVG drawn by the page itself (no charting library: two kinds of drawing — a sequence diagram and
// a line chart — are a few dozen lines each, need no download, and keep the strict CSP: only
// attributes and classes, no inline style). Every text is set with textContent.

const NS = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes (and text). */
export function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const LANE_WIDTH = 190;
const ROW_HEIGHT = 26;
const HEAD_HEIGHT = 34;
const TIME_WIDTH = 96;
/** Room right of the last lane for the labels of its dots. */
const LABEL_ROOM = 220;

/**
 * A sequence diagram: one vertical lifeline per lane, one row per step, an arrow from `from` to
 * `to` (lane indices; the same index draws a dot on that lane) labelled `label`, its time on the
 * left. A step with `onSelect` can be clicked or chosen with the keyboard.
 * @param {string[]} lanes
 * @param {{ from: number, to: number, label: string, time: string, kind?: string, data?: Record<string, string>, onSelect?: () => void }[]} steps
 */
export function sequenceDiagram(lanes, steps) {
  const width = TIME_WIDTH + lanes.length * LANE_WIDTH + LABEL_ROOM;
  const height = HEAD_HEIGHT + (steps.length + 1) * ROW_HEIGHT;
  const root = svg('svg', { class: 'sequence', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img' });
  const x = (lane) => TIME_WIDTH + lane * LANE_WIDTH + LANE_WIDTH / 2;
  root.append(svg('title', {}, `Sequence of ${steps.length} steps between ${lanes.join(', ')}`));
  lanes.forEach((name, lane) => {
    const head = svg('g', { class: 'lane-head', 'data-lane': name });
    head.append(svg('rect', { x: x(lane) - LANE_WIDTH / 2 + 6, y: 4, width: LANE_WIDTH - 12, height: HEAD_HEIGHT - 10, rx: 4 }));
    // Long names keep both ends: the technology and the suffix that tells two channels apart.
    const label = svg('text', { x: x(lane), y: HEAD_HEIGHT / 2 + 4, 'text-anchor': 'middle' }, name.length > 24 ? `${name.slice(0, 10)}…${name.slice(-13)}` : name);
    label.append(svg('title', {}, name));
    head.append(label);
    root.append(head, svg('line', { class: 'lifeline', x1: x(lane), x2: x(lane), y1: HEAD_HEIGHT, y2: height }));
  });
  steps.forEach((step, index) => {
    const y = HEAD_HEIGHT + (index + 1) * ROW_HEIGHT;
    const group = svg('g', { class: `step ${step.kind ?? ''}`, 'data-index': index, ...(step.data ?? {}) });
    group.append(svg('text', { class: 'time', x: 4, y: y + 4 }, step.time));
    if (step.from === step.to) {
      group.append(svg('circle', { cx: x(step.from), cy: y, r: 5 }));
      group.append(svg('text', { class: 'label', x: x(step.from) + 9, y: y + 4 }, step.label));
    } else {
      const x1 = x(step.from);
      const x2 = x(step.to);
      const tip = x2 > x1 ? x2 - 2 : x2 + 2;
      const back = x2 > x1 ? -8 : 8;
      group.append(svg('line', { class: 'arrow', x1, x2: tip, y1: y, y2: y }));
      group.append(svg('path', { class: 'head', d: `M${tip},${y} l${back},-4 l0,8 z` }));
      group.append(svg('text', { class: 'label', x: (x1 + x2) / 2, y: y - 5, 'text-anchor': 'middle' }, step.label));
    }
    // A wide target behind the drawing: the whole row can be clicked, or chosen with Tab and Enter.
    if (step.onSelect) {
      group.prepend(svg('rect', { class: 'hit', x: 0, y: y - ROW_HEIGHT / 2, width, height: ROW_HEIGHT }));
      group.setAttribute('tabindex', '0');
      group.addEventListener('click', step.onSelect);
      group.addEventListener('keydown', (event) => {
        if (/** @type {KeyboardEvent} */ (event).key === 'Enter') step.onSelect?.();
      });
    }
    root.append(group);
  });
  return root;
}

/**
 * A line chart of one series over time: the last `spanMs` up to now, its largest value on the
 * axis, the latest value in the title.
 * @param {string} title
 * @param {{ t: number, v: number }[]} points
 * @param {{ unit?: string, spanMs?: number, width?: number, height?: number, min?: number }} options
 */
export function lineChart(title, points, options = {}) {
  const width = options.width ?? 360;
  const height = options.height ?? 120;
  const pad = { left: 40, right: 8, top: 22, bottom: 18 };
  const now = points.length ? points[points.length - 1].t : Date.now();
  // The whole window once it is full; until then what there is (a minute at least), so that a
  // server that just started does not draw a sliver at the right edge.
  const span = Math.min(options.spanMs ?? 15 * 60_000, Math.max(60_000, points.length ? now - points[0].t : 0));
  const max = Math.max(options.min ?? 1, ...points.map((p) => p.v));
  const px = (t) => pad.left + ((t - (now - span)) / span) * (width - pad.left - pad.right);
  const py = (v) => height - pad.bottom - (v / max) * (height - pad.top - pad.bottom);
  const root = svg('svg', { class: 'chart', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img' });
  const latest = points.length ? points[points.length - 1].v : 0;
  root.append(svg('title', {}, `${title}: ${latest}${options.unit ?? ''}`));
  root.append(svg('text', { class: 'chart-title', x: pad.left, y: 14 }, `${title}  ${latest}${options.unit ?? ''}`));
  root.append(svg('text', { class: 'axis', x: pad.left - 4, y: pad.top + 4, 'text-anchor': 'end' }, formatAxis(max)));
  root.append(svg('text', { class: 'axis', x: pad.left - 4, y: height - pad.bottom, 'text-anchor': 'end' }, '0'));
  root.append(svg('text', { class: 'axis', x: pad.left, y: height - 4 }, span >= 120_000 ? `-${Math.round(span / 60_000)} min` : `-${Math.round(span / 1000)} s`));
  root.append(svg('text', { class: 'axis', x: width - pad.right, y: height - 4, 'text-anchor': 'end' }, 'now'));
  root.append(svg('line', { class: 'grid', x1: pad.left, x2: width - pad.right, y1: pad.top, y2: pad.top }));
  root.append(svg('line', { class: 'grid', x1: pad.left, x2: width - pad.right, y1: height - pad.bottom, y2: height - pad.bottom }));
  const visible = points.filter((p) => p.t >= now - span);
  if (visible.length > 0) {
    const line = visible.map((p) => `${px(p.t).toFixed(1)},${py(p.v).toFixed(1)}`).join(' ');
    root.append(svg('polygon', { class: 'area', points: `${px(visible[0].t).toFixed(1)},${height - pad.bottom} ${line} ${px(visible[visible.length - 1].t).toFixed(1)},${height - pad.bottom}` }));
    root.append(svg('polyline', { class: 'line', points: line }));
  }
  return root;
}

function formatAxis(value) {
  return value >= 100 ? String(Math.round(value)) : String(Math.round(value * 10) / 10);
}
