// The inspector's only way to the server: the memsvc HTTP API, called
// with fetch from the page's own origin. Every data call carries the API
// key (when one was given) as a Bearer header and the chosen namespace as
// X-Memsvc-Namespace (once the server lists namespaces); no cookie is ever
// sent or set.

const KEY_ITEM = 'memsvc.inspector.key';
const NS_ITEM = 'memsvc.inspector.namespace';
const TIMEOUT_MS = 30000;

// The API lives at the parent of the page's /ui/ path, so the inspector
// also works behind a proxy that serves memsvc under a path of its own.
const base = new URL('../', document.baseURI);

let key = readItem(KEY_ITEM);
let namespace = '';
let namespacesKnown = false;

function readItem(name) {
  try {
    return sessionStorage.getItem(name) || '';
  } catch {
    return '';
  }
}

function writeItem(name, value) {
  try {
    if (value) sessionStorage.setItem(name, value);
    else sessionStorage.removeItem(name);
  } catch {
    // Storage refused (private mode, policy): the value lives in memory.
  }
}

// ApiError is an answer other than 2xx, with the server's error envelope.
export class ApiError extends Error {
  constructor(status, envelope, path) {
    const code = envelope && envelope.code ? envelope.code : `HTTP ${status}`;
    const msg = envelope && envelope.message ? envelope.message : 'the server gave no details';
    super(`${code}: ${msg}`);
    this.status = status;
    this.code = code;
    this.path = path;
    this.requestId = envelope && envelope.request_id ? envelope.request_id : '';
  }
}

// hasKey reports whether an API key was given.
export function hasKey() {
  return key !== '';
}

// setKey keeps k for the following calls, in session storage when
// remember is set (it survives a reload of this tab, not the tab), else
// only in this page's memory.
export function setKey(k, remember) {
  key = k;
  writeItem(KEY_ITEM, remember ? k : '');
}

// forgetKey drops the key from memory and storage.
export function forgetKey() {
  key = '';
  writeItem(KEY_ITEM, '');
}

// currentNamespace is the namespace the calls are scoped to ('' means the
// server's default, and no header is sent).
export function currentNamespace() {
  return namespace;
}

// setNamespace scopes the following calls to ns.
export function setNamespace(ns) {
  namespace = namespacesKnown ? ns : '';
  writeItem(NS_ITEM, namespace);
}

// listNamespaces asks the server for the namespaces the key may see. A
// server without namespaces answers 404; then there is only the default
// one and no header is sent.
export async function listNamespaces(signal) {
  try {
    const out = await call('GET', 'v1/namespaces', undefined, signal);
    const list = (out && out.namespaces) || [];
    namespacesKnown = list.length > 0;
    const stored = readItem(NS_ITEM);
    const names = list.map((n) => n.name);
    namespace = names.includes(stored) ? stored : names.includes('default') ? 'default' : names[0] || '';
    return list;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 405)) {
      namespacesKnown = false;
      namespace = '';
      return null;
    }
    throw err;
  }
}

// call sends one API request and returns the decoded JSON answer (or the
// text of a non-JSON answer, such as /metrics). path is relative to the
// API's base ("v1/recall/query").
export async function call(method, path, body, signal) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (key) headers.Authorization = `Bearer ${key}`;
  if (namespace) headers['X-Memsvc-Namespace'] = namespace;
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  const res = await fetch(new URL(path, base), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
    redirect: 'error',
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  const type = res.headers.get('Content-Type') || '';
  const isJSON = type.startsWith('application/json');
  if (!res.ok) {
    let envelope = null;
    if (isJSON) {
      try {
        envelope = await res.json();
      } catch {
        envelope = null;
      }
    }
    throw new ApiError(res.status, envelope, path);
  }
  if (res.status === 204) return null;
  return isJSON ? res.json() : res.text();
}

// The API's routes, one function each, with the inspector's choices:
// recalls never reconsolidate (reading must not reinforce) and lists are
// always bounded.

export function stats(signal) {
  return call('GET', 'v1/introspect/stats', undefined, signal);
}

export function record(id, signal) {
  return call('GET', `v1/introspect/record/${encodeURIComponent(id)}`, undefined, signal);
}

export function recall(req, signal) {
  return call('POST', 'v1/recall/query', { ...req, reconsolidate: false }, signal);
}

export function recallRaw(req, signal) {
  return call('POST', 'v1/recall/raw', req, signal);
}

export function timeline(req, signal) {
  return call('POST', 'v1/recall/timeline', req, signal);
}

export function graph(req, signal) {
  return call('POST', 'v1/recall/graph', req, signal);
}

export function forecast(ids, at, signal) {
  return call('POST', 'v1/introspect/decay-forecast', { record_ids: ids, forecast_at: at }, signal);
}

export function metrics(signal) {
  return call('GET', 'metrics', undefined, signal);
}
