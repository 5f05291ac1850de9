// The raw journal: verbatim entries, newest first, grouped by session,
// with the visibility and secrecy filters of recall.raw. Pages move the
// time range's end to the oldest entry shown, skipping the entries of that
// instant already shown (see nextCursor).

import * as api from '../api.js';
import { h, routeHref, recordHref, contentText, timeEl, nextCursor, cursorOf, TIME_MIN } from '../dom.js';

const PAGE = 50;
const LEVELS = ['public', 'sensitive', 'secret'];

function filters(p, levels) {
  const form = h('form', { class: 'filters', 'aria-label': 'Journal filters' },
    h('div', { class: 'row' },
      h('div', {},
        h('label', { for: 'j-session' }, 'Session id'),
        h('input', { id: 'j-session', name: 'session', value: p.get('session') || '', spellcheck: 'false', placeholder: 'all sessions' })),
      h('div', { class: 'grow' },
        h('label', { for: 'j-q' }, 'Text'),
        h('input', { id: 'j-q', name: 'q', type: 'search', value: p.get('q') || '' }))),
    h('div', { class: 'row' },
      h('fieldset', {},
        h('legend', {}, 'Visibility (normal entries always show)'),
        h('span', { class: 'check' },
          h('input', { type: 'checkbox', id: 'j-scratch', name: 'scratch', checked: p.get('scratch') === '1' }),
          h('label', { for: 'j-scratch' }, 'private scratch')),
        h('span', { class: 'check' },
          h('input', { type: 'checkbox', id: 'j-sealed', name: 'sealed', checked: p.get('sealed') === '1' }),
          h('label', { for: 'j-sealed' }, 'sealed'))),
      h('fieldset', {},
        h('legend', {}, 'Secrecy'),
        LEVELS.map((l) => h('span', { class: 'check' },
          h('input', { type: 'checkbox', id: `j-sec-${l}`, name: 'sec', value: l, checked: levels.includes(l) }),
          h('label', { for: `j-sec-${l}` }, l)))),
      h('button', { type: 'submit' }, 'Filter')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    location.hash = routeHref('journal', {
      session: String(f.get('session') || '').trim(),
      q: String(f.get('q') || '').trim(),
      scratch: f.get('scratch') ? '1' : '',
      sealed: f.get('sealed') ? '1' : '',
      // "none" keeps an explicit empty choice apart from the default.
      sec: f.getAll('sec').length ? f.getAll('sec') : 'none',
    });
  });
  return form;
}

function entry(r) {
  const derived = r.derived_memory_ids || [];
  return h('article', { class: `entry vis-${r.visibility} sec-${r.secrecy_level}`, 'data-id': r.id },
    h('header', { class: 'entry-head' },
      h('span', { class: `badge speaker-${r.speaker}` }, r.speaker),
      h('span', { class: 'muted' }, r.source),
      r.visibility !== 'normal' ? h('span', { class: 'badge warn' }, r.visibility.replace('_', ' ')) : null,
      h('span', { class: `badge secrecy-${r.secrecy_level}` }, r.secrecy_level),
      timeEl(r.created_at),
      r.turn_id ? h('span', { class: 'muted' }, `turn ${r.turn_id}`) : null,
      r.topic_id ? h('span', { class: 'muted' }, `topic ${r.topic_id}`) : null,
      r.suppressed ? h('span', { class: 'badge warn' }, 'suppressed') : null),
    h('pre', { class: 'content' }, contentText(r.content) || '(no text)'),
    derived.length
      ? h('p', { class: 'small' }, 'Dreamt into: ', derived.map((id, i) => [i ? ', ' : '', h('a', { href: recordHref(id) }, id.slice(0, 8))]))
      : null);
}

export async function render({ el, params: p, signal }) {
  const secParam = p.get('sec');
  const levels = secParam === null ? ['public', 'sensitive'] : secParam.split(',').filter((l) => LEVELS.includes(l));
  const cursor = cursorOf(p, 'before');
  const skip = cursor ? Math.min(cursor.skip, 1000 - PAGE) : 0;
  const req = {
    limit: PAGE + skip,
    include_private_scratch: p.get('scratch') === '1',
    include_sealed: p.get('sealed') === '1',
    secrecy_levels: levels,
  };
  if (p.get('session')) req.session_id = p.get('session');
  if (p.get('q')) req.query = p.get('q');
  if (cursor) req.temporal = { start: TIME_MIN, end: cursor.at };
  const out = await api.recallRaw(req, signal);
  const more = (out.records || []).length === req.limit;
  const recs = (out.records || []).slice(skip);
  const title = p.get('session') ? `Journal of session ${p.get('session')}` : 'Raw journal';
  el.append(h('h1', { tabindex: '-1' }, title), filters(p, levels));
  el.append(h('p', { class: 'summary', id: 'journal-summary' },
    `${recs.length} ${recs.length === 1 ? 'entry' : 'entries'}, newest first${cursor ? ', older than the page you came from' : ''}.`));
  if (!recs.length) {
    el.append(h('p', { class: 'empty' }, 'No entries match.'));
  }
  // Consecutive entries of one session form a group.
  let group = null;
  let current = null;
  const list = h('div', { class: 'journal', id: 'journal-list' });
  for (const r of recs) {
    if (r.session_id !== current) {
      current = r.session_id;
      const params = Object.fromEntries(p.entries());
      group = h('section', { class: 'session-group' },
        h('h2', {}, 'Session ', h('code', {}, r.session_id),
          p.get('session') ? null : [' ', h('a', { class: 'small', href: routeHref('journal', { ...params, session: r.session_id, before: '', skip: '' }) }, 'only this session')]));
      list.append(group);
    }
    group.append(entry(r));
  }
  el.append(list);
  const base = Object.fromEntries(p.entries());
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  if (cursor) pager.append(h('a', { href: routeHref('journal', { ...base, before: '', skip: '' }) }, '← Newest'));
  if (more && recs.length) {
    const next = nextCursor(recs, (r) => r.created_at, cursor);
    pager.append(h('a', { href: routeHref('journal', { ...base, before: next.at, skip: next.skip }), rel: 'next' }, 'Older entries →'));
  }
  if (pager.childNodes.length) el.append(pager);
  return title;
}
