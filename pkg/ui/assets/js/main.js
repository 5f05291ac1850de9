// The inspector's entry point: a router over the location hash
// ("#/record/ID", "#/timeline?g=week"), the API key form, the namespace
// selector, and the views.

import * as api from './api.js';
import { h, errorBox } from './dom.js';
import * as memories from './views/memories.js';
import * as record from './views/record.js';
import * as graph from './views/graph.js';
import * as timeline from './views/timeline.js';
import * as journal from './views/journal.js';
import * as dashboard from './views/dashboard.js';

const views = { memories, record, graph, timeline, journal, dashboard };

const main = document.getElementById('main');
const status = document.getElementById('status');
const login = document.getElementById('login');
const loginForm = document.getElementById('login-form');
const loginKey = document.getElementById('login-key');
const loginRemember = document.getElementById('login-remember');
const loginError = document.getElementById('login-error');
const forgetButton = document.getElementById('forget-key');
const nsSelect = document.getElementById('namespace');

let current = null; // AbortController of the view on screen
let namespacesLoaded = false;
let firstRender = true;

// parseRoute splits "#/graph/ID?depth=2" into a view name, an id and the
// parameters.
function parseRoute(hash) {
  const raw = hash.startsWith('#/') ? hash.slice(2) : '';
  const [path, query] = raw.split('?', 2);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query || '');
  const name = parts[0] || 'memories';
  return { name, id: parts[1] || '', params };
}

function setStatus(msg) {
  status.textContent = msg;
}

function markNav(name) {
  for (const a of document.querySelectorAll('#nav a')) {
    const view = a.dataset.view;
    const on = view === name || (name === 'record' && view === 'memories');
    if (on) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

// showLogin asks for a key; why says why (none yet, or refused).
function showLogin(refused) {
  if (current) current.abort();
  main.replaceChildren();
  main.hidden = true;
  login.hidden = false;
  forgetButton.hidden = true;
  loginError.textContent = refused ? 'The server refused this key (401 UNAUTHORIZED). Check it and try again.' : '';
  setStatus('');
  document.title = 'API key needed · memsvc inspector';
  loginKey.value = '';
  loginKey.focus();
}

function hideLogin() {
  login.hidden = true;
  main.hidden = false;
  forgetButton.hidden = !api.hasKey();
}

// loadNamespaces fills the selector from GET /v1/namespaces, or shows only
// "default" on a server without namespaces.
async function loadNamespaces() {
  const list = await api.listNamespaces();
  nsSelect.replaceChildren();
  if (!list) {
    nsSelect.append(h('option', { value: '' }, 'default'));
    nsSelect.disabled = true;
    nsSelect.title = 'This server has one namespace.';
  } else {
    for (const n of list) {
      const count = n.total_records === undefined ? '' : ` (${Number(n.total_records).toLocaleString()})`;
      nsSelect.append(h('option', { value: n.name }, `${n.name}${count}`));
    }
    nsSelect.value = api.currentNamespace();
    nsSelect.disabled = list.length < 2;
    nsSelect.title = '';
  }
  namespacesLoaded = true;
}

// handleError shows err in place of the view, or the key form on 401.
function handleError(err, signal) {
  if (signal && signal.aborted && !(err instanceof api.ApiError)) return;
  if (err instanceof api.ApiError && err.status === 401) {
    const refused = api.hasKey();
    api.forgetKey();
    showLogin(refused);
    return;
  }
  setStatus('');
  main.replaceChildren(h('h1', { tabindex: '-1' }, 'Something went wrong'), errorBox(err));
}

// render draws the view the location hash names and moves focus to its
// heading, except on the first load and when keepFocus says to leave it
// where it is (the namespace selector).
async function render({ keepFocus = false } = {}) {
  if (current) current.abort();
  const ctl = new AbortController();
  current = ctl;
  const route = parseRoute(location.hash);
  const view = views[route.name];
  markNav(route.name);
  hideLogin();
  main.dataset.ready = 'false';
  setStatus('Loading…');
  try {
    if (!namespacesLoaded) await loadNamespaces();
    if (ctl.signal.aborted) return;
    const frag = document.createDocumentFragment();
    let title = 'Not found';
    if (!view) {
      frag.append(h('h1', { tabindex: '-1' }, 'Not found'), h('p', {}, 'The inspector has no page here. ', h('a', { href: '#/' }, 'Newest memories')));
    } else {
      title = await view.render({ el: frag, id: route.id, params: route.params, signal: ctl.signal, setStatus });
    }
    if (ctl.signal.aborted) return;
    main.replaceChildren(frag);
    document.title = `${title} · memsvc inspector`;
    setStatus('');
    main.dataset.view = route.name;
    main.dataset.ready = 'true';
    if (!firstRender && !keepFocus) {
      const h1 = main.querySelector('h1');
      (h1 || main).focus();
    }
    firstRender = false;
  } catch (err) {
    if (current === ctl) {
      main.dataset.ready = 'true';
      handleError(err, ctl.signal);
    }
  }
}

loginForm.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const k = loginKey.value.trim();
  if (!k) {
    loginError.textContent = 'Enter a key.';
    return;
  }
  api.setKey(k, loginRemember.checked);
  loginKey.value = '';
  namespacesLoaded = false;
  render();
});

forgetButton.addEventListener('click', () => {
  api.forgetKey();
  namespacesLoaded = false;
  showLogin(false);
});

nsSelect.addEventListener('change', () => {
  api.setNamespace(nsSelect.value);
  render({ keepFocus: true });
});

// The skip link moves focus to the content without touching the route.
document.getElementById('skip').addEventListener('click', (ev) => {
  ev.preventDefault();
  main.focus();
});

window.addEventListener('hashchange', () => {
  if (location.hash === '' || location.hash.startsWith('#/')) render();
});

render();
