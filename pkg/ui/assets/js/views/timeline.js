// Timeline: memories of the persistent stores per day or week over a time
// window, as bars and as a list. One recall.timeline call with a limit;
// when the server says the window holds more (truncated), "Later in this
// window" continues from the last memory shown, skipping the memories of
// that instant already shown (see nextCursor).

import * as api from '../api.js';
import { h, routeHref, nextCursor, cursorOf, fromLocalInput, localInput } from '../dom.js';
import { barChart } from '../chart.js';
import { resultItem } from './memories.js';

const LIMIT = 300;
const DAY_MS = 86400000;
const SPAN = { day: 30 * DAY_MS, week: 26 * 7 * DAY_MS };
const shortFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const longFmt = new Intl.DateTimeFormat(undefined, { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });

function bucketName(b, g) {
  const d = new Date(b.start);
  return g === 'week' ? `Week of ${longFmt.format(d)}` : longFmt.format(d);
}

function controls(g, from, to) {
  const form = h('form', { class: 'filters', 'aria-label': 'Timeline window' },
    h('div', { class: 'row' },
      h('div', {},
        h('label', { for: 't-g' }, 'Bars per'),
        h('select', { id: 't-g', name: 'g' }, ['day', 'week'].map((v) => h('option', { value: v, selected: v === g }, v)))),
      h('div', {},
        h('label', { for: 't-from' }, 'From'),
        h('input', { id: 't-from', name: 'from', type: 'datetime-local', value: localInput(from) })),
      h('div', {},
        h('label', { for: 't-to' }, 'To'),
        h('input', { id: 't-to', name: 'to', type: 'datetime-local', value: localInput(to) })),
      h('button', { type: 'submit' }, 'Show')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    location.hash = routeHref('timeline', { g: f.get('g'), from: fromLocalInput(f.get('from')), to: fromLocalInput(f.get('to')) });
  });
  return form;
}

export async function render({ el, params: p, signal }) {
  const g = p.get('g') === 'week' ? 'week' : 'day';
  const to = p.get('to') || new Date().toISOString();
  const from = p.get('from') || new Date(new Date(to).getTime() - SPAN[g]).toISOString();
  const cursor = cursorOf(p, 'after');
  const skip = cursor ? Math.min(cursor.skip, 1000 - LIMIT) : 0;
  const start = cursor ? cursor.at : from;
  const out = await api.timeline({ range: { start, end: to }, granularity: g, limit: LIMIT + skip }, signal);
  const buckets = dropFirst(out.buckets || [], skip);
  const total = buckets.reduce((n, b) => n + b.count, 0);
  const title = 'Timeline';
  el.append(h('h1', { tabindex: '-1' }, title), controls(g, from, to));

  const span = new Date(to).getTime() - new Date(from).getTime();
  const nav = h('nav', { class: 'pager', 'aria-label': 'Time windows' },
    h('a', { href: routeHref('timeline', { g, from: new Date(new Date(from).getTime() - span).toISOString(), to: from }) }, '← Earlier window'),
    h('a', { href: routeHref('timeline', { g }) }, 'Up to now'),
    h('a', { href: routeHref('timeline', { g, from: to, to: new Date(new Date(to).getTime() + span).toISOString() }) }, 'Later window →'));
  el.append(nav);

  const unit = g === 'week' ? 'week' : 'day';
  const what = `${total} ${total === 1 ? 'memory' : 'memories'} in ${buckets.length} ${buckets.length === 1 ? unit : `${unit}s`}` +
    `${cursor ? ', continuing after the previous page' : ''}. Days and weeks are in UTC; weeks start on Monday.`;
  el.append(h('p', { class: 'summary', id: 'timeline-summary' }, what));
  if (out.truncated && buckets.length) {
    const shown = buckets.flatMap((b) => b.memories);
    const next = nextCursor(shown, (m) => m.record.created_at, cursor);
    el.append(h('p', { class: 'notice', id: 'timeline-truncated' },
      `This window holds more memories than the ${total} shown here; the bars count only these. `,
      h('a', { href: routeHref('timeline', { g, from, to, after: next.at, skip: next.skip }) }, 'Later in this window →')));
  }
  if (!buckets.length) {
    el.append(h('p', { class: 'empty' }, 'No memories were created in this window.'));
    return title;
  }
  const shownUntil = out.truncated ? lastCreated(buckets) : to;
  const bars = allBuckets(start, shownUntil, g, buckets).map(({ b, i, at }) => (b ? {
    label: shortFmt.format(new Date(b.start)),
    value: b.count,
    title: `${bucketName(b, g)}: ${b.count} ${b.count === 1 ? 'memory' : 'memories'}`,
    href: location.hash,
    onclick: (ev) => {
      ev.preventDefault();
      const target = document.getElementById(`bucket-${i}`);
      if (target) {
        target.scrollIntoView();
        target.focus();
      }
    },
  } : {
    label: shortFmt.format(new Date(at)),
    value: 0,
    title: `${bucketName({ start: at }, g)}: no memories`,
  }));
  el.append(h('figure', { class: 'chart-box' },
    barChart(bars, { title: `Memories per ${g}`, desc: what }),
    h('figcaption', {}, `Memories per ${g}; select a bar to jump to its memories.`)));
  const list = h('div', { class: 'buckets', id: 'timeline-list' });
  buckets.forEach((b, i) => {
    list.append(h('section', { class: 'bucket', 'aria-labelledby': `bucket-${i}` },
      h('h2', { id: `bucket-${i}`, tabindex: '-1' }, `${bucketName(b, g)} — ${b.count} ${b.count === 1 ? 'memory' : 'memories'}`),
      h('ol', { class: 'results' }, b.memories.map((m) => resultItem(m, false)))));
  });
  el.append(list);
  return title;
}

// allBuckets lists every day or week (UTC, weeks from Monday) from start
// to end, with the answer's bucket where it has one, so empty days show as
// gaps; a window of more than MAX_BARS buckets shows the answer's only.
const MAX_BARS = 120;
function allBuckets(start, end, g, buckets) {
  const got = buckets.map((b, i) => ({ b, i, at: new Date(b.start).getTime() }));
  const step = (g === 'week' ? 7 : 1) * DAY_MS;
  const d = new Date(start);
  let at = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (g === 'week') at -= ((new Date(at).getUTCDay() + 6) % 7) * DAY_MS;
  const last = new Date(end).getTime();
  if (Number.isNaN(at) || Number.isNaN(last) || (last - at) / step > MAX_BARS) return got;
  const byStart = new Map(got.map((x) => [x.at, x]));
  const out = [];
  for (; at <= last; at += step) out.push(byStart.get(at) || { at });
  return out;
}

// dropFirst removes the first n memories (oldest first) from the buckets.
function dropFirst(buckets, n) {
  const out = [];
  for (const b of buckets) {
    const keep = b.memories.slice(Math.min(n, b.memories.length));
    n -= b.memories.length - keep.length;
    if (keep.length) out.push({ ...b, memories: keep, count: keep.length });
  }
  return out;
}

function lastCreated(buckets) {
  const b = buckets[buckets.length - 1];
  return b.memories[b.memories.length - 1].record.created_at;
}
