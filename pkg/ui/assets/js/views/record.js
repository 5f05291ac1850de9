// A record's page: its content as text, fidelity now and its forecast
// curve (one decay-forecast call per point), emotion, meta-memory,
// version, and associations with links (named from one graph call around
// the record).

import * as api from '../api.js';
import {
  h, decodeText, byteLength, preview, timeEl, when, day, num, field, storeBadge, fidelityBar,
  recordHref, graphHref,
} from '../dom.js';
import { lineChart, meterRows } from '../chart.js';

const DAY_MS = 86400000;
const DORMANT = 0.05;
const POINTS = 12;

// horizonDays is how far the forecast looks: about eight times the
// record's effective stability, when its fidelity is near a third.
function horizonDays(f) {
  const sa = (Number(f.stability) || 1) * (Number(f.emotional_anchor) || 1);
  return Math.max(7, Math.min(3650, Math.round(8 * sa)));
}

function spanLabel(days) {
  if (days === 0) return 'now';
  if (days < 60) return `${Math.round(days)} d`;
  if (days < 730) return `${Math.round(days / 30)} mo`;
  return `${(days / 365).toFixed(1)} y`;
}

async function forecastCurve(rec, signal) {
  const H = horizonDays(rec.fidelity);
  const now = Date.now();
  const days = Array.from({ length: POINTS + 1 }, (_, i) => (H * i) / POINTS);
  const answers = await Promise.all(
    days.map((d) => api.forecast([rec.id], new Date(now + d * DAY_MS).toISOString(), signal)),
  );
  const points = answers.map((a, i) => {
    const fc = a.forecasts[0];
    return { x: days[i], y: fc.forecasted_fidelity, label: `${spanLabel(days[i])}: ${fc.forecasted_fidelity.toFixed(3)}` };
  });
  return { H, points, current: answers[0].forecasts[0].current_fidelity, threshold: answers[0].forecasts[0].estimated_threshold_date };
}

function contentSection(rec) {
  const blocks = (rec.content && rec.content.blocks) || [];
  const sec = h('section', { id: 'record-content', 'aria-labelledby': 'sec-content' }, h('h2', { id: 'sec-content' }, 'Content'));
  if (rec.content && rec.content.summary) {
    sec.append(h('p', { class: 'lead' }, h('strong', {}, 'Summary: '), rec.content.summary));
  }
  blocks.forEach((b, i) => {
    const emb = b.embedding && b.embedding.length ? `, with an embedding of ${b.embedding.length} numbers` : '';
    if (b.modality === 'text') {
      sec.append(h('pre', { class: 'content', id: i === 0 ? 'record-text' : undefined }, decodeText(b.data)));
      if (emb) sec.append(h('p', { class: 'muted' }, `Text block${emb}.`));
    } else {
      sec.append(h('p', { class: 'muted' }, `${b.modality} block (${b.format || 'unknown format'}), ${num(byteLength(b.data))} bytes${emb}; not shown.`));
    }
  });
  if (!blocks.length) sec.append(h('p', { class: 'muted' }, 'No content blocks.'));
  return sec;
}

function fidelitySection(rec, fc) {
  const f = rec.fidelity;
  const sec = h('section', { id: 'record-fidelity', 'aria-labelledby': 'sec-fidelity' }, h('h2', { id: 'sec-fidelity' }, 'Fidelity'));
  sec.append(h('dl', { class: 'facts' },
    field('Now', fidelityBar(f.score)),
    field('Noise level', f.noise_level.toFixed(3)),
    field('Stability', `${num(f.stability, 2)} days`),
    field('Emotional anchor', num(f.emotional_anchor, 2)),
    field('Decay rate', num(f.decay_rate, 2)),
    field('Reinforcements', num(f.reinforcement_count)),
    field('Last decay tick', timeEl(f.last_decay_tick))));
  const last = fc.points[fc.points.length - 1];
  const thr = fc.threshold
    ? `It falls below ${DORMANT} (dormant) around ${day(fc.threshold)}.`
    : 'It does not fall below the dormant threshold within the forecast range of the server.';
  const text = `Fidelity now ${fc.current.toFixed(3)}; in ${spanLabel(fc.H)} ${last.y.toFixed(3)}. ${thr}`;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((t) => ({ x: fc.H * t, label: spanLabel(fc.H * t) }));
  sec.append(
    h('figure', { class: 'chart-box' },
      lineChart(fc.points, {
        id: 'forecast-chart', title: 'Decay forecast', desc: text, xMax: fc.H, xTicks: ticks, threshold: DORMANT,
        thresholdLabel: 'dormant', xLabel: 'time from now (without recall)',
      }),
      h('figcaption', { id: 'forecast-text' }, text)),
  );
  return sec;
}

function emotionSection(e) {
  const sec = h('section', { id: 'record-emotion', 'aria-labelledby': 'sec-emotion' }, h('h2', { id: 'sec-emotion' }, 'Emotion'));
  const axes = ['joy', 'trust', 'fear', 'surprise', 'sadness', 'disgust', 'anger', 'anticipation'];
  if (!e || (!e.intensity && axes.every((a) => !e[a]))) {
    sec.append(h('p', { class: 'muted' }, 'No emotion recorded.'));
    return sec;
  }
  let best = axes[0];
  for (const a of axes) if (e[a] > e[best]) best = a;
  sec.append(h('p', { id: 'emotion-text' }, `Mostly ${best}; intensity ${num(e.intensity, 2)}, valence ${num(e.valence, 2)}.`));
  sec.append(meterRows(axes.map((a) => ({ name: a, value: e[a] })), 'Plutchik axes', ['axis', 'value']));
  return sec;
}

function list(items, render) {
  return h('ul', { class: 'plain' }, items.map((x) => h('li', {}, render(x))));
}

function metaSection(m) {
  const sec = h('section', { id: 'record-meta', 'aria-labelledby': 'sec-meta' }, h('h2', { id: 'sec-meta' }, 'Meta-memory'));
  if (!m) {
    sec.append(h('p', { class: 'muted' }, 'None.'));
    return sec;
  }
  const dl = h('dl', { class: 'facts', id: 'meta' });
  const add = (term, v) => {
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) return;
    dl.append(...field(term, v));
  };
  add('Capture status', m.capture_status);
  add('Intent', m.intent);
  add('Rationale', m.rationale);
  add('Trigger', m.trigger);
  add('Decision', m.decision);
  add('Confidence', m.confidence === null || m.confidence === undefined ? null : num(m.confidence, 2));
  add('Goals', m.goals && m.goals.length ? list(m.goals, (g) => g) : null);
  add('Assumptions', m.assumptions && m.assumptions.length ? list(m.assumptions, (a) => a) : null);
  add('Alternatives', m.alternatives && m.alternatives.length
    ? list(m.alternatives, (a) => [a.option, a.chosen ? ' (chosen)' : '', a.reason ? ` — ${a.reason}` : ''])
    : null);
  add('Evidence', m.evidence && m.evidence.length
    ? list(m.evidence, (ev) => [
      ev.label || ev.excerpt || ev.uri || 'evidence',
      ev.record_id ? [' ', h('a', { href: recordHref(ev.record_id) }, 'record')] : '',
      ev.raw_record_id ? ` (raw entry ${ev.raw_record_id})` : '',
    ])
    : null);
  add('Tags', m.tags && m.tags.length ? h('span', { class: 'tags' }, m.tags.map((t) => h('span', { class: 'tag' }, t))) : null);
  add('Source records', m.source_record_ids && m.source_record_ids.length
    ? list(m.source_record_ids, (id) => h('a', { href: recordHref(id) }, id))
    : null);
  add('Context edges', m.context_edges && m.context_edges.length
    ? list(m.context_edges, (e) => [e.relation, ' → ', h('a', { href: recordHref(e.target_id) }, e.target_id), e.rationale ? ` — ${e.rationale}` : ''])
    : null);
  add('Captured', m.captured_at ? timeEl(m.captured_at) : null);
  sec.append(dl.childNodes.length ? dl : h('p', { class: 'muted' }, 'Nothing captured.'));
  return sec;
}

function associationsSection(rec, names) {
  const as = rec.associations || [];
  const sec = h('section', { id: 'record-assoc', 'aria-labelledby': 'sec-assoc' },
    h('h2', { id: 'sec-assoc' }, `Associations (${as.length})`));
  if (!as.length) {
    sec.append(h('p', { class: 'muted' }, 'This record links to no other record.'));
    return sec;
  }
  sec.append(h('p', {}, h('a', { href: graphHref(rec.id) }, 'Open the association graph around this record')));
  const sorted = [...as].sort((a, b) => b.weight - a.weight);
  sec.append(h('table', { class: 'data', id: 'associations' },
    h('thead', {}, h('tr', {}, ['Target', 'Type', 'Weight', 'Made by', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, sorted.map((a) => h('tr', {},
      h('td', {}, h('a', { href: recordHref(a.target_id) }, names.get(a.target_id) || a.target_id)),
      h('td', {}, a.association_type),
      h('td', { class: 'numeric' }, num(a.weight, 2)),
      h('td', {}, a.origin || '—'),
      h('td', {}, timeEl(a.created_at)))))));
  return sec;
}

export async function render({ el, id, signal }) {
  const rec = await api.record(id, signal);
  const [fc, g] = await Promise.all([
    forecastCurve(rec, signal),
    (rec.associations || []).length
      ? api.graph({ center_id: rec.id, depth: 1, limit_nodes: Math.min(256, rec.associations.length + 1) }, signal)
      : Promise.resolve({ nodes: [] }),
  ]);
  const names = new Map(g.nodes.map((n) => [n.id, n.summary || n.id]));
  const title = preview(rec.content, 80) || rec.id;
  el.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Memories'), ' / record'),
    h('h1', { tabindex: '-1' }, title),
    h('dl', { class: 'facts', id: 'record-facts' },
      field('Id', h('code', {}, rec.id)),
      field('Store', storeBadge(rec.store)),
      field('Created', timeEl(rec.created_at)),
      field('Updated', timeEl(rec.updated_at)),
      field('Last accessed', `${when(rec.last_accessed_at)} (${num(rec.access_count)} accesses)`),
      field('Version', `${rec.version} — memsvc keeps the current version only; earlier ones are not kept`)),
    contentSection(rec),
    fidelitySection(rec, fc),
    emotionSection(rec.emotion),
    metaSection(rec.meta),
    associationsSection(rec, names),
  );
  const meta = rec.metadata;
  if (meta && typeof meta === 'object' && Object.keys(meta).length) {
    el.append(h('section', { id: 'record-metadata', 'aria-labelledby': 'sec-metadata' },
      h('h2', { id: 'sec-metadata' }, 'Metadata'),
      h('pre', { class: 'json' }, JSON.stringify(meta, null, 2))));
  }
  return title;
}
