// Memories: the first page. Without a query it lists the newest memories
// (a recall with an empty cue), a page at a time: "Older" moves the time
// range's end to the oldest memory shown and skips the memories of that
// instant already shown (see nextCursor). With a query it shows the best
// matches, ranked by the server.

import * as api from '../api.js';
import {
  h, routeHref, recordHref, graphHref, preview, timeEl, fidelityBar, storeBadge, nextCursor, cursorOf,
  localInput, fromLocalInput, TIME_MIN, TIME_MAX,
} from '../dom.js';

export const STORES = ['episodic', 'semantic', 'procedural', 'emotional', 'working'];
const PAGE = 25;
const MAX_LIMIT = 400;
const SERVER_MAX = 1000;

// searchForm is the search form, filled from the route's parameters.
function searchForm(p) {
  const stores = (p.get('stores') || '').split(',').filter(Boolean);
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Search memories' },
    h('div', { class: 'row' },
      h('div', { class: 'grow' },
        h('label', { for: 'q' }, 'Text'),
        h('input', { id: 'q', name: 'q', type: 'search', value: p.get('q') || '', placeholder: 'words to look for (empty: newest first)' })),
      h('div', {},
        h('label', { for: 'mode' }, 'Recall mode'),
        h('select', { id: 'mode', name: 'mode' },
          [['', 'server default'], ['perfect', 'perfect (exact content)'], ['human', 'human (faded words masked)']].map(([v, t]) =>
            h('option', { value: v, selected: (p.get('mode') || '') === v }, t)))),
    ),
    h('div', { class: 'row' },
      h('fieldset', {},
        h('legend', {}, 'Stores'),
        STORES.map((st) => h('span', { class: 'check' },
          h('input', { type: 'checkbox', id: `st-${st}`, name: 'stores', value: st, checked: stores.includes(st) }),
          h('label', { for: `st-${st}` }, st)))),
      h('div', {},
        h('label', { for: 'from' }, 'Created from'),
        h('input', { id: 'from', name: 'from', type: 'datetime-local', value: localInput(p.get('from')) })),
      h('div', {},
        h('label', { for: 'to' }, 'Created until'),
        h('input', { id: 'to', name: 'to', type: 'datetime-local', value: localInput(p.get('to')) })),
      h('span', { class: 'check' },
        h('input', { type: 'checkbox', id: 'dormant', name: 'dormant', checked: p.get('dormant') === '1' }),
        h('label', { for: 'dormant' }, 'Include dormant')),
      h('button', { type: 'submit' }, 'Search'),
    ),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    location.hash = routeHref('', {
      q: String(f.get('q') || '').trim(),
      mode: f.get('mode'),
      stores: f.getAll('stores'),
      from: fromLocalInput(f.get('from')),
      to: fromLocalInput(f.get('to')),
      dormant: f.get('dormant') ? '1' : '',
    });
  });
  return form;
}

// resultItem is one recalled memory in a list.
export function resultItem(m, showScore) {
  const rec = m.record;
  const title = preview(rec.content, 120) || '(no text)';
  const text = preview(m.rendered_content || rec.content, 400);
  const tags = (rec.meta && rec.meta.tags) || [];
  return h(
    'li',
    { class: 'result', 'data-id': rec.id },
    h('div', { class: 'result-head' },
      h('a', { class: 'result-title', href: recordHref(rec.id) }, title),
      h('span', { class: 'result-meta' },
        storeBadge(rec.store), fidelityBar(rec.fidelity.score), timeEl(rec.created_at),
        showScore ? h('span', { class: 'score', title: 'relevance score' }, `score ${Number(m.relevance_score).toFixed(3)}`) : null,
        h('a', { class: 'small', href: graphHref(rec.id), 'aria-label': `Association graph around ${title}` }, 'graph'))),
    text && text !== title ? h('p', { class: 'result-text' }, text) : null,
    tags.length ? h('p', { class: 'tags' }, tags.map((t) => h('span', { class: 'tag' }, t))) : null,
  );
}

export async function render({ el, params: p, signal }) {
  const q = (p.get('q') || '').trim();
  const cursor = q ? null : cursorOf(p, 'before');
  const limit = Math.min(MAX_LIMIT, Math.max(1, Number(p.get('limit')) || PAGE));
  const skip = cursor ? Math.min(cursor.skip, SERVER_MAX - limit) : 0;
  const req = { cue: {}, limit: limit + skip };
  if (q) req.cue.text = q;
  const from = p.get('from') || '';
  // The cursor comes from a page that honoured "to", so it is never later.
  const end = cursor ? cursor.at : p.get('to') || '';
  if (from || end) req.cue.temporal = { start: from || TIME_MIN, end: end || TIME_MAX };
  const stores = (p.get('stores') || '').split(',').filter(Boolean);
  if (stores.length) req.stores = stores;
  if (p.get('mode')) req.recall_mode = p.get('mode');
  if (p.get('dormant') === '1') req.include_decayed = true;

  const out = await api.recall(req, signal);
  const all = out.memories || [];
  const more = all.length === req.limit;
  const mems = all.slice(skip);
  const title = q ? `Search: ${q}` : cursor ? 'Older memories' : 'Newest memories';
  el.append(h('h1', { tabindex: '-1' }, title), searchForm(p));

  const summary = q
    ? `${mems.length} best ${mems.length === 1 ? 'match' : 'matches'} (of ${out.total_candidates} candidates)`
    : `${mems.length} ${mems.length === 1 ? 'memory' : 'memories'}, newest first${cursor ? ', older than the page you came from' : ''}`;
  el.append(h('p', { class: 'summary', id: 'result-summary' }, summary));
  if (mems.length === 0) {
    el.append(h('p', { class: 'empty' }, q ? 'Nothing matches. Try other words, or fewer filters.' : 'No memories here yet.'));
  } else {
    el.append(h('ol', { class: 'results', 'aria-labelledby': 'result-summary' }, mems.map((m) => resultItem(m, !!q))));
  }

  const base = Object.fromEntries(p.entries());
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  if (!q) {
    if (cursor) pager.append(h('a', { href: routeHref('', { ...base, before: '', skip: '' }) }, '← Newest'));
    if (more && mems.length) {
      const next = nextCursor(mems, (m) => m.record.created_at, cursor);
      pager.append(h('a', { href: routeHref('', { ...base, before: next.at, skip: next.skip }), rel: 'next' }, 'Older memories →'));
    }
  } else if (mems.length === limit && limit < MAX_LIMIT) {
    pager.append(h('a', { href: routeHref('', { ...base, limit: Math.min(MAX_LIMIT, limit * 2) }) }, `Show up to ${Math.min(MAX_LIMIT, limit * 2)} matches`));
  }
  if (pager.childNodes.length) el.append(pager);
  return title;
}
