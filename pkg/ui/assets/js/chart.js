// Charts drawn as SVG: a line chart (the decay forecast) and bar charts
// (the timeline, the dashboard). Colours come from the stylesheet's
// classes, so they follow the light or dark scheme.

import { s, h } from './dom.js';

// lineChart draws points [{x, y, label}] with x in [0, xMax] and y in
// [0, 1]. opts: title, xTicks [{x, label}], threshold (a y drawn dashed),
// thresholdLabel, desc (the chart's text alternative).
export function lineChart(points, opts) {
  const W = 640;
  const H = 260;
  const m = { l: 44, r: 16, t: 16, b: 36 };
  const iw = W - m.l - m.r;
  const ih = H - m.t - m.b;
  const xMax = opts.xMax || Math.max(1, ...points.map((p) => p.x));
  const X = (x) => m.l + (iw * x) / xMax;
  const Y = (y) => m.t + ih * (1 - Math.max(0, Math.min(1, y)));
  const kids = [s('title', {}, opts.title || 'chart'), s('desc', {}, opts.desc || '')];
  for (const y of [0, 0.25, 0.5, 0.75, 1]) {
    kids.push(s('line', { class: 'grid', x1: m.l, x2: W - m.r, y1: Y(y), y2: Y(y) }));
    kids.push(s('text', { class: 'tick', x: m.l - 6, y: Y(y) + 4, 'text-anchor': 'end' }, y.toFixed(2)));
  }
  for (const t of opts.xTicks || []) {
    kids.push(s('line', { class: 'grid', x1: X(t.x), x2: X(t.x), y1: m.t, y2: m.t + ih }));
    kids.push(s('text', { class: 'tick', x: X(t.x), y: H - m.b + 16, 'text-anchor': 'middle' }, t.label));
  }
  if (opts.threshold !== undefined) {
    kids.push(s('line', { class: 'threshold', x1: m.l, x2: W - m.r, y1: Y(opts.threshold), y2: Y(opts.threshold) }));
    kids.push(
      s('text', { class: 'tick', x: W - m.r, y: Y(opts.threshold) - 4, 'text-anchor': 'end' }, opts.thresholdLabel || ''),
    );
  }
  const d = points.map((p, i) => `${i ? 'L' : 'M'}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join(' ');
  kids.push(s('path', { class: 'line', d }));
  for (const p of points) {
    kids.push(s('circle', { class: 'dot', cx: X(p.x), cy: Y(p.y), r: 3 }, s('title', {}, p.label || '')));
  }
  if (opts.xLabel) {
    kids.push(s('text', { class: 'axis', x: m.l + iw / 2, y: H - 4, 'text-anchor': 'middle' }, opts.xLabel));
  }
  return s('svg', { id: opts.id, class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': opts.title || 'chart' }, ...kids);
}

// barChart draws bars [{label, value, title, href, onclick, cls}] side by
// side; opts: title, desc, height. A bar with href or onclick is a link.
export function barChart(bars, opts) {
  const W = 640;
  const H = opts.height || 220;
  const m = { l: 40, r: 24, t: 12, b: 40 };
  const iw = W - m.l - m.r;
  const ih = H - m.t - m.b;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const n = Math.max(1, bars.length);
  const slot = iw / n;
  const bw = Math.max(2, Math.min(48, slot * 0.8));
  const kids = [s('title', {}, opts.title || 'chart'), s('desc', {}, opts.desc || '')];
  for (const f of [0, 0.5, 1]) {
    const y = m.t + ih * (1 - f);
    kids.push(s('line', { class: 'grid', x1: m.l, x2: W - m.r, y1: y, y2: y }));
    kids.push(s('text', { class: 'tick', x: m.l - 6, y: y + 4, 'text-anchor': 'end' }, Math.round(max * f).toLocaleString()));
  }
  const every = Math.ceil(n / 12);
  bars.forEach((b, i) => {
    const x = m.l + slot * i + (slot - bw) / 2;
    const bh = (ih * b.value) / max;
    const rect = s('rect', { class: `bar ${b.cls || ''}`, x: x.toFixed(1), y: (m.t + ih - bh).toFixed(1), width: bw.toFixed(1), height: bh.toFixed(1) });
    const tip = s('title', {}, b.title || `${b.label}: ${b.value}`);
    let bar;
    if (b.href || b.onclick) {
      bar = s('a', { href: b.href || '#', class: 'bar-link', 'aria-label': b.title || `${b.label}: ${b.value}`, onclick: b.onclick }, tip, rect);
    } else {
      bar = s('g', {}, tip, rect);
    }
    kids.push(bar);
    if (i % every === 0) {
      kids.push(s('text', { class: 'tick', x: (x + bw / 2).toFixed(1), y: H - m.b + 16, 'text-anchor': 'middle' }, b.label));
    }
  });
  return s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': opts.title || 'chart' }, ...kids);
}

// inlineBar is a small horizontal bar filled to fraction (0..1).
export function inlineBar(fraction, cls) {
  const w = 120 * Math.max(0, Math.min(1, Number(fraction) || 0));
  return s(
    'svg',
    { class: 'meter', viewBox: '0 0 120 10', width: 120, height: 10, 'aria-hidden': 'true', focusable: 'false' },
    s('rect', { class: 'fbar-bg', x: 0, y: 0, width: 120, height: 10, rx: 2 }),
    s('rect', { class: `fbar-fg ${cls || ''}`, x: 0, y: 0, width: w.toFixed(1), height: 10, rx: 2 }),
  );
}

// meterRows is a table of named values in [-1, 1] with a bar each, for
// emotion axes and per-store fidelity; head names the two columns.
export function meterRows(rows, caption, head = ['name', 'value']) {
  return h(
    'table',
    { class: 'meters' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, head[0]), h('th', { scope: 'col' }, head[1]), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'bar')))),
    h(
      'tbody',
      {},
      rows.map((r) => {
        const v = Math.max(-1, Math.min(1, Number(r.value) || 0));
        return h(
          'tr',
          {},
          h('th', { scope: 'row' }, r.name),
          h('td', { class: 'numeric' }, (Number(r.value) || 0).toFixed(2)),
          h('td', {}, inlineBar(Math.abs(v), v < 0 ? 'negative' : '')),
        );
      }),
    ),
  );
}
