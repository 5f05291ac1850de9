// The association graph around a record (or, without one, around the
// oldest records of each store): one recall.graph call, laid out by
// layout.js and drawn as SVG. Every node is a link to its record; the
// list under the drawing says the same in text and can re-centre the
// graph.

import * as api from '../api.js';
import { h, s, routeHref, recordHref, graphHref, storeBadge, fidelityBar, num } from '../dom.js';
import { layout } from '../layout.js';

const W = 960;
const H = 560;
const SIZES = [10, 30, 60, 120];

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function label(n) {
  const t = (n.summary || n.id).replace(/\s+/g, ' ').trim();
  return t.length > 24 ? `${t.slice(0, 23)}…` : t;
}

function controls(id, depth, nodes) {
  const form = h('form', { class: 'filters', 'aria-label': 'Graph settings' },
    h('div', { class: 'row' },
      h('div', {},
        h('label', { for: 'g-center' }, 'Centre record id'),
        h('input', { id: 'g-center', name: 'center', value: id, size: 38, spellcheck: 'false', placeholder: 'empty: oldest records of each store' })),
      h('div', {},
        h('label', { for: 'g-depth' }, 'Hops'),
        h('select', { id: 'g-depth', name: 'depth' }, [1, 2, 3, 4].map((d) => h('option', { value: d, selected: d === depth }, String(d))))),
      h('div', {},
        h('label', { for: 'g-nodes' }, 'At most nodes'),
        h('select', { id: 'g-nodes', name: 'nodes' }, SIZES.map((n) => h('option', { value: n, selected: n === nodes }, String(n))))),
      h('button', { type: 'submit' }, 'Draw')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    const c = String(f.get('center') || '').trim();
    const params = { depth: f.get('depth'), nodes: f.get('nodes') };
    location.hash = c ? graphHref(c, params) : routeHref('graph', params);
  });
  return form;
}

function drawing(g, center) {
  const ids = g.nodes.map((n) => n.id);
  const known = new Set(ids);
  const edges = g.edges.filter((e) => known.has(e.source) && known.has(e.target));
  const pos = layout(ids, edges.map((e) => [e.source, e.target]), center, W, H);
  const kids = [
    s('title', {}, 'Association graph'),
    s('desc', {}, `${g.nodes.length} records and ${edges.length} associations.`),
    s('defs', {},
      s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 19, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        s('path', { class: 'arrow', d: 'M 0 0 L 10 5 L 0 10 z' }))),
  ];
  for (const e of edges) {
    const a = pos.get(e.source);
    const b = pos.get(e.target);
    kids.push(s('line', {
      class: `edge edge-${e.edge_type}`, x1: a.x.toFixed(1), y1: a.y.toFixed(1), x2: b.x.toFixed(1), y2: b.y.toFixed(1),
      'stroke-width': (0.6 + 2.4 * Math.max(0, Math.min(1, e.weight))).toFixed(2), 'marker-end': 'url(#arrow)',
    }, s('title', {}, `${e.edge_type}, weight ${Number(e.weight).toFixed(2)}`)));
  }
  // A crowded drawing labels the centre only; the others show theirs on
  // hover and focus (and all are listed under the drawing).
  const quiet = g.nodes.length > 25;
  for (const n of g.nodes) {
    const p = pos.get(n.id);
    const r = 7 + 7 * Math.max(0, Math.min(1, n.fidelity));
    const isCenter = n.id === center;
    kids.push(s('a', { href: recordHref(n.id), class: `node store-${n.store}${isCenter ? ' center' : ''}${quiet && !isCenter ? ' quiet' : ''}`, 'data-id': n.id,
      'aria-label': `${n.store} record: ${n.summary || n.id}, fidelity ${Number(n.fidelity).toFixed(2)}${isCenter ? ' (centre)' : ''}` },
    s('title', {}, `${n.summary || n.id}\n${n.store}, fidelity ${Number(n.fidelity).toFixed(2)}`),
    s('circle', { cx: p.x.toFixed(1), cy: p.y.toFixed(1), r: r.toFixed(1) }),
    s('text', { x: (p.x + r + 4).toFixed(1), y: (p.y + 4).toFixed(1) }, label(n))));
  }
  // The view box hugs the drawing (with room for the labels on the right),
  // so a small graph is drawn small rather than stretched.
  const ps = [...pos.values()];
  const x0 = Math.min(...ps.map((p) => p.x)) - 30;
  const y0 = Math.min(...ps.map((p) => p.y)) - 30;
  const w = Math.max(...ps.map((p) => p.x)) + 230 - x0;
  const hgt = Math.max(...ps.map((p) => p.y)) + 30 - y0;
  return s('svg', {
    class: 'graph', id: 'graph-svg', viewBox: `${x0.toFixed(0)} ${y0.toFixed(0)} ${w.toFixed(0)} ${hgt.toFixed(0)}`,
    width: w.toFixed(0), height: hgt.toFixed(0), role: 'group', 'aria-label': 'Association graph; each node links to its record',
  }, ...kids);
}

function legend(g) {
  const stores = [...new Set(g.nodes.map((n) => n.store))];
  const types = [...new Set(g.edges.map((e) => e.edge_type))];
  return h('div', { class: 'legend' },
    h('span', {}, 'Stores: ', stores.map((st) => [storeBadge(st), ' '])),
    types.length ? h('span', {}, 'Links: ', types.map((t) => [h('span', { class: `badge edge-badge edge-${t}` }, t), ' '])) : null,
    h('span', { class: 'muted' }, 'Node size follows fidelity; arrows point from the record that holds the link.'));
}

function nodeList(g, center, params) {
  const degree = new Map();
  for (const e of g.edges) {
    degree.set(e.source, (degree.get(e.source) || 0) + 1);
    degree.set(e.target, (degree.get(e.target) || 0) + 1);
  }
  return h('section', { 'aria-labelledby': 'sec-nodes' },
    h('h2', { id: 'sec-nodes' }, 'Records in the graph'),
    h('table', { class: 'data', id: 'graph-nodes' },
      h('thead', {}, h('tr', {}, ['Record', 'Store', 'Fidelity', 'Links', ''].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, g.nodes.map((n) => h('tr', { class: n.id === center ? 'current' : '' },
        h('td', {}, h('a', { href: recordHref(n.id) }, n.summary || n.id)),
        h('td', {}, storeBadge(n.store)),
        h('td', {}, fidelityBar(n.fidelity)),
        h('td', { class: 'numeric' }, num(degree.get(n.id) || 0)),
        h('td', {}, n.id === center ? 'centre' : h('a', { href: graphHref(n.id, params), 'aria-label': `Centre the graph on ${n.summary || n.id}` }, 'centre here')))))));
}

export async function render({ el, id, params: p, signal }) {
  const depth = Math.max(1, Math.min(4, Number(p.get('depth')) || 2));
  const nodes = SIZES.includes(Number(p.get('nodes'))) ? Number(p.get('nodes')) : 30;
  const req = { depth, limit_nodes: nodes };
  if (id) req.center_id = id;
  const g = await api.graph(req, signal);
  const center = id && g.nodes.some((n) => n.id === id) ? id : '';
  const title = id ? 'Association graph around a record' : 'Association graph';
  el.append(h('h1', { tabindex: '-1' }, title), controls(id, depth, nodes));
  if (id && !center) {
    el.append(h('p', { class: 'empty' }, 'No record with this id in this namespace.'));
    return title;
  }
  if (!g.nodes.length) {
    el.append(h('p', { class: 'empty' }, 'No records to draw yet.'));
    return title;
  }
  const known = new Set(g.nodes.map((n) => n.id));
  const shown = g.edges.filter((e) => known.has(e.source) && known.has(e.target)).length;
  el.append(...[
    h('p', { class: 'summary', id: 'graph-summary' },
      `${plural(g.nodes.length, 'record')}, ${plural(shown, 'association')}${g.nodes.length >= nodes ? ` (the first ${nodes} reached; raise the limit to see more)` : ''}.`,
      center ? [' Centre: ', h('a', { href: recordHref(center) }, g.nodes.find((n) => n.id === center).summary || center), '.'] : ''),
    center && !g.edges.some((e) => e.source === center)
      ? h('p', { class: 'notice' }, 'This record holds no links of its own. The graph follows links from the record that holds them, so records that link to this one are not drawn from here.')
      : null,
    legend(g),
    h('figure', { class: 'graph-box' }, drawing(g, center)),
    nodeList(g, center, { depth, nodes }),
  ].filter(Boolean));
  return title;
}
