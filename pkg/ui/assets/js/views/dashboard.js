// Dashboard: what GET /v1/introspect/stats says (counts per store,
// average fidelity, dream backlog, background loops, recalls), refreshed
// every few seconds while it is on screen; the recall rate is the change
// of the recall count between two refreshes. When the server serves
// /metrics, the background loops' rounds come from there too.

import * as api from '../api.js';
import { h, num, when, field, storeBadge } from '../dom.js';
import { inlineBar, meterRows } from '../chart.js';
import { STORES } from './memories.js';

const REFRESH_MS = 10000;

// parseMetrics reads the Prometheus text format into [{name, labels, value}].
export function parseMetrics(text) {
  const out = [];
  for (const line of String(text).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[3] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

function metricSum(series, name, match) {
  let sum = 0;
  let found = false;
  for (const s of series) {
    if (s.name !== name) continue;
    if (Object.entries(match || {}).some(([k, v]) => s.labels[k] !== v)) continue;
    sum += s.value;
    found = true;
  }
  return found ? sum : null;
}

async function optionalMetrics(signal) {
  try {
    return parseMetrics(await api.metrics(signal));
  } catch (err) {
    if (err instanceof api.ApiError && err.status === 404) return null;
    throw err;
  }
}

function stat(name, value) {
  return h('span', { 'data-stat': name }, value);
}

function rateText(prev, cur) {
  if (!prev) return `measuring (next refresh in ${REFRESH_MS / 1000} s)`;
  const dt = (cur.at - prev.at) / 60000;
  const perMin = dt > 0 ? (cur.recalls - prev.recalls) / dt : 0;
  return `${num(perMin, 1)} per minute`;
}

function card(title, id, ...body) {
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...body);
}

function loopsCard(st, series) {
  const rows = [
    field('Decay loop', stat('decay_loop', st.background_decay_enabled ? 'running' : 'off')),
    field('Dream loop', st.background_dream_enabled ? 'running' : 'off'),
  ];
  if (series) {
    for (const loop of ['decay', 'dream']) {
      const ok = metricSum(series, 'memsvc_background_rounds_total', { loop, result: 'ok' });
      const bad = metricSum(series, 'memsvc_background_rounds_total', { loop, result: 'error' });
      const skipped = metricSum(series, 'memsvc_background_rounds_total', { loop, result: 'skipped' });
      if (ok !== null) rows.push(field(`${loop} rounds`, `${num(ok)} ok, ${num(bad || 0)} failed, ${num(skipped || 0)} skipped (low disk)`));
    }
    const panics = metricSum(series, 'memsvc_decay_panics_total');
    if (panics !== null) rows.push(field('Decay panics', num(panics)));
  }
  return card('Background loops', 'c-loops', h('dl', { class: 'facts' }, rows),
    series ? null : h('p', { class: 'muted small' }, 'Round counts appear here when the server serves /metrics (http.metrics_enabled).'));
}

export async function render({ el, signal }) {
  const [st, series] = await Promise.all([api.stats(signal), optionalMetrics(signal)]);
  const title = 'Dashboard';
  let prev = null;
  let cur = { at: Date.now(), recalls: st.total_recall_count };
  const by = st.records_by_store || {};
  const fid = st.avg_fidelity_by_store || {};
  el.append(h('h1', { tabindex: '-1' }, title));
  el.append(h('p', { class: 'summary' }, `Refreshes every ${REFRESH_MS / 1000} seconds while open. Last: `, stat('refreshed', new Date().toLocaleTimeString())));
  const grid = h('div', { class: 'cards', id: 'dashboard' });
  grid.append(
    card('Records', 'c-records',
      h('p', { class: 'big' }, stat('total_records', num(st.total_records))),
      h('dl', { class: 'facts' },
        field('Associations', stat('total_associations', num(st.total_associations))),
        field('Vector index', `${num(st.vector_index_records)} (${st.vector_search_backend})`),
        field('Oldest', when(st.oldest_record)),
        field('Newest', stat('newest_record', when(st.newest_record))),
        st.quarantined_records ? field('Quarantined', h('strong', { class: 'warn' }, num(st.quarantined_records))) : null)),
    card('Per store', 'c-stores',
      h('table', { class: 'data', id: 'store-counts' },
        h('thead', {}, h('tr', {}, ['Store', 'Records', ''].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, STORES.map((s) => h('tr', {},
          h('th', { scope: 'row' }, storeBadge(s)),
          h('td', { class: 'numeric' }, stat(`store_${s}`, num(by[s] || 0))),
          h('td', {}, inlineBar((by[s] || 0) / Math.max(1, ...STORES.map((x) => by[x] || 0)), `store-${s}`))))))),
    card('Fidelity', 'c-fidelity',
      h('p', { class: 'big' }, stat('avg_fidelity', num(st.avg_fidelity, 3))),
      meterRows(STORES.filter((s) => by[s]).map((s) => ({ name: s, value: fid[s] })), 'Average fidelity per store', ['store', 'average'])),
    card('Dreaming', 'c-dream',
      h('dl', { class: 'facts' },
        field('Backlog', stat('dream_backlog', `${num(st.raw_journal_pending_dream)} of ${num(st.raw_journal_records)} raw entries`)),
        field('Last dream', when(st.last_dream_tick_at)),
        field('Summaries written', num(st.dream_episodic_summaries)),
        field('Semantic nodes', num(st.dream_semantic_nodes)))),
    card('Recall', 'c-recall',
      h('dl', { class: 'facts' },
        field('Recalls so far', stat('total_recall_count', num(st.total_recall_count))),
        field('Recall rate', stat('recall_rate', rateText(null, cur))),
        series && metricSum(series, 'memsvc_recall_total') !== null
          ? field('Since start (metrics)', num(metricSum(series, 'memsvc_recall_total')))
          : null),
      h('p', { class: 'muted small' }, 'The inspector\'s own searches count as recalls too; it never reinforces what it shows.')),
    loopsCard(st, series),
  );
  const evo = st.evolution_metrics;
  if (evo && (evo.parameter_adjustments.length || evo.detected_patterns.length)) {
    grid.append(card('Evolution', 'c-evolution',
      evo.parameter_adjustments.length
        ? h('table', { class: 'data' },
          h('thead', {}, h('tr', {}, ['Store', 'Parameter', 'From', 'To', 'Why'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, evo.parameter_adjustments.map((a) => h('tr', {},
            h('td', {}, a.store), h('td', {}, a.parameter), h('td', { class: 'numeric' }, num(a.original_value, 3)),
            h('td', { class: 'numeric' }, num(a.current_value, 3)), h('td', {}, a.reason)))))
        : null,
      evo.detected_patterns.length ? h('ul', {}, evo.detected_patterns.map((p) => h('li', {}, p))) : null));
  }
  el.append(grid);

  // Refresh the numbers in place (no re-render, so focus stays put).
  const timer = setInterval(async () => {
    try {
      const next = await api.stats(signal);
      prev = cur;
      cur = { at: Date.now(), recalls: next.total_recall_count };
      const nb = next.records_by_store || {};
      const values = {
        total_records: num(next.total_records),
        total_associations: num(next.total_associations),
        newest_record: when(next.newest_record),
        avg_fidelity: num(next.avg_fidelity, 3),
        dream_backlog: `${num(next.raw_journal_pending_dream)} of ${num(next.raw_journal_records)} raw entries`,
        total_recall_count: num(next.total_recall_count),
        recall_rate: rateText(prev, cur),
        decay_loop: next.background_decay_enabled ? 'running' : 'off',
        refreshed: new Date().toLocaleTimeString(),
      };
      for (const s of STORES) values[`store_${s}`] = num(nb[s] || 0);
      for (const node of document.querySelectorAll('[data-stat]')) {
        if (node.dataset.stat in values) node.textContent = values[node.dataset.stat];
      }
    } catch {
      // A failed refresh keeps the last numbers; the next one tries again.
    }
  }, REFRESH_MS);
  signal.addEventListener('abort', () => clearInterval(timer));
  return title;
}
