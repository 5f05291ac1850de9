// Small helpers to build the page. Text always goes in as text nodes,
// never as markup, so nothing a memory holds can become part of the page.

const SVG_NS = 'http://www.w3.org/2000/svg';

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'text') {
      el.textContent = String(v);
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// h builds an HTML element: h('a', {href: '#/'}, 'Home').
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

// s builds an SVG element.
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

// decodeText turns the bytes of a content block (a JSON array of
// integers, or a base64 string) into text.
export function decodeText(data) {
  if (!data) return '';
  let bytes;
  if (typeof data === 'string') {
    const bin = atob(data);
    bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } else {
    bytes = Uint8Array.from(data);
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}

// byteLength is the size of a content block's data.
export function byteLength(data) {
  if (!data) return 0;
  return typeof data === 'string' ? Math.floor((data.length * 3) / 4) : data.length;
}

// contentText is the text of a memory's content: its text blocks joined.
export function contentText(content) {
  if (!content || !content.blocks) return '';
  return content.blocks
    .filter((b) => b.modality === 'text')
    .map((b) => decodeText(b.data))
    .join('\n\n');
}

// preview is the first n characters of a memory's summary or text.
export function preview(content, n = 240) {
  const t = (content && content.summary) || contentText(content);
  const one = t.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dayFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

// when formats a time for people, in the browser's time zone.
export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateFmt.format(d);
}

// day formats the date of a time.
export function day(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dayFmt.format(d);
}

// timeEl is a <time> element for an RFC 3339 time.
export function timeEl(iso) {
  return h('time', { datetime: iso }, when(iso));
}

// num formats a number with grouping; fixed digits when given.
export function num(v, digits) {
  if (v === undefined || v === null || Number.isNaN(v)) return '—';
  return digits === undefined
    ? Number(v).toLocaleString()
    : Number(v).toLocaleString(undefined, { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

// The widest time range the server accepts, for open-ended filters.
export const TIME_MIN = '0001-01-01T00:00:00Z';
export const TIME_MAX = '9999-12-31T23:59:59.999999999Z';

// nextCursor is where the page after items starts, in a list ordered by
// creation time whose ties the server always orders the same way (by id):
// at the time of the last item, skipping the items at that time the pages
// so far have shown. A time alone would not do: every record of a batch
// has the same creation time. cur is the cursor of the page shown.
export function nextCursor(items, timeOf, cur) {
  const at = timeOf(items[items.length - 1]);
  let skip = items.filter((x) => timeOf(x) === at).length;
  if (cur && cur.at === at) skip += cur.skip;
  return { at, skip };
}

// cursorOf reads the cursor of a page from its parameters.
export function cursorOf(params, name) {
  const at = params.get(name) || '';
  return at ? { at, skip: Math.max(0, Number(params.get('skip')) || 0) } : null;
}

// localInput turns an RFC 3339 time into the value of a
// datetime-local input (the browser's time zone, minutes).
export function localInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

// fromLocalInput turns a datetime-local value into RFC 3339 (UTC).
export function fromLocalInput(v) {
  if (!v) return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

// routeHref builds a hash link: routeHref('timeline', {g: 'day'}).
export function routeHref(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    q.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const qs = q.toString();
  return `#/${path}${qs ? `?${qs}` : ''}`;
}

// recordHref links to a record's page.
export function recordHref(id) {
  return `#/record/${encodeURIComponent(id)}`;
}

// graphHref links to the graph around a record.
export function graphHref(id, params) {
  return routeHref(`graph/${encodeURIComponent(id)}`, params);
}

// fidelityBar is a small bar showing a fidelity score, with the number.
export function fidelityBar(score) {
  const v = Math.max(0, Math.min(1, Number(score) || 0));
  const svg = s(
    'svg',
    { class: 'fbar', viewBox: '0 0 60 8', width: 60, height: 8, 'aria-hidden': 'true', focusable: 'false' },
    s('rect', { class: 'fbar-bg', x: 0, y: 0, width: 60, height: 8, rx: 2 }),
    s('rect', { class: v < 0.05 ? 'fbar-fg dormant' : 'fbar-fg', x: 0, y: 0, width: (60 * v).toFixed(1), height: 8, rx: 2 }),
  );
  return h('span', { class: 'fidelity', title: `fidelity ${v.toFixed(3)}` }, svg, h('span', {}, v.toFixed(2)));
}

// storeBadge names a store with its colour.
export function storeBadge(store) {
  return h('span', { class: `badge store-${store}` }, store);
}

// field is one term and description of a <dl>.
export function field(term, ...desc) {
  return [h('dt', {}, term), h('dd', {}, ...desc)];
}

// errorBox shows an API or network error.
export function errorBox(err) {
  const parts = [h('strong', {}, 'The server could not answer. '), err && err.message ? err.message : String(err)];
  if (err && err.requestId) parts.push(h('span', { class: 'muted' }, ` (request ${err.requestId})`));
  return h('div', { class: 'error-box', role: 'alert' }, ...parts);
}
