// batchd dashboard: plain modern JavaScript, no build step, no libraries
// (docs/dashboard.md says why). Everything it shows comes from the
// Kubernetes API of the server that served it, with the user's bearer token
// (kept in sessionStorage) — so the API's authentication and RBAC apply.
// Each view lists the resources it needs and then watches them
// (`?watch=1`, read as a stream with fetch()), so changes show within a
// moment without reloading.
'use strict';

const TOKEN_KEY = 'batchd.token';
const KQ = '/apis/kueue.x-k8s.io/v1beta2';
const PATHS = {
  clusterqueues: KQ + '/clusterqueues',
  localqueues: KQ + '/localqueues',
  cohorts: KQ + '/cohorts',
  workloads: KQ + '/workloads',
  topologies: KQ + '/topologies',
  jobs: '/apis/batch/v1/jobs',
  jobsets: '/apis/jobset.x-k8s.io/v1alpha2/jobsets',
  pods: '/api/v1/pods',
  nodes: '/api/v1/nodes',
};
// Rows a table shows at most (the DOM stays small on big clusters).
const MAX_ROWS = 500;
// A watch asks the server to end it after this long; the page then resumes
// from the last resourceVersion (the server bounds watches too).
const WATCH_SECONDS = 240;

// ---------- small helpers ----------
const $ = (sel) => document.querySelector(sel);
function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
const enc = encodeURIComponent;
function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
function headers(extra) {
  const h = Object.assign({ Accept: 'application/json' }, extra || {});
  if (token()) h.Authorization = 'Bearer ' + token();
  return h;
}
// A Kubernetes quantity ("500m", "1.5Gi", "2e3") as a number.
function qty(s) {
  if (s === undefined || s === null || s === '') return 0;
  if (typeof s === 'number') return s;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(String(s).trim());
  if (!m) return 0;
  const mult = { '': 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
    Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5, Ei: 1024 ** 6 }[m[2]];
  return mult === undefined ? 0 : parseFloat(m[1]) * mult;
}
function fmtNum(n, resource) {
  if (/memory|storage/.test(resource || '') && n >= 1024) {
    const units = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
    let u = -1;
    while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
    return (Math.round(n * 10) / 10) + units[u];
  }
  return String(Math.round(n * 1000) / 1000);
}
function age(ts) {
  if (!ts) return '';
  let s = Math.max(0, (Date.now() - Date.parse(ts)) / 1000);
  if (s < 120) return Math.floor(s) + 's';
  s /= 60; if (s < 120) return Math.floor(s) + 'm';
  s /= 60; if (s < 48) return Math.floor(s) + 'h';
  return Math.floor(s / 24) + 'd';
}
function cond(obj, type) { return ((obj.status || {}).conditions || []).find((c) => c.type === type); }
function isTrue(obj, type) { const c = cond(obj, type); return !!c && c.status === 'True'; }
function key(o) { return (o.metadata.namespace ? o.metadata.namespace + '/' : '') + o.metadata.name; }
function byName(a, b) { return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0; }
function table(cols, rows, empty) {
  if (!rows.length) return `<p class="muted">${esc(empty || 'None.')}</p>`;
  const more = rows.length > MAX_ROWS ? `<p class="muted">${rows.length - MAX_ROWS} more not shown.</p>` : '';
  return `<div class="scroll"><table><thead><tr>${cols.map((c) => `<th>${esc(c)}</th>`).join('')}</tr></thead><tbody>` +
    rows.slice(0, MAX_ROWS).map((r) => `<tr>${r.map((c) => `<td${c && c.cls ? ` class="${c.cls}"` : ''}>${c && c.html !== undefined ? c.html : esc(c)}</td>`).join('')}</tr>`).join('') +
    `</tbody></table></div>${more}`;
}
const H = (html, cls) => ({ html, cls });
const link = (href, text) => H(`<a href="${esc(href)}">${esc(text)}</a>`);

// ---------- the API ----------
class HttpError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}
async function api(path, opts) {
  opts = opts || {};
  const res = await fetch(path, { method: opts.method || 'GET', headers: headers(opts.headers), body: opts.body, signal: opts.signal });
  if (res.status === 401) { showLogin('The server refused the token (401 Unauthorized).'); throw new HttpError(401, 'Unauthorized'); }
  if (opts.text && res.ok) return res.text();
  let body = null;
  try { body = await res.json(); } catch (e) { body = null; }
  if (!res.ok) throw new HttpError(res.status, (body && body.message) || res.statusText);
  return body;
}

// A list + watch of one collection, kept current in `items`.
class Feed {
  constructor(url) {
    this.url = url;
    this.items = new Map();
    this.state = 'loading';  // loading | ready | error
    this.error = '';
    this.watching = false;
    this.ctrl = new AbortController();
    this.run();
  }
  stop() { this.ctrl.abort(); }
  list() { return [...this.items.values()]; }
  async run() {
    let rv = '';
    while (!this.ctrl.signal.aborted) {
      try {
        if (!rv) rv = await this.relist();
        rv = await this.watch(rv);
      } catch (e) {
        if (this.ctrl.signal.aborted) return;
        this.watching = false;
        if (e.code === 401) return;
        if (e.code === 403 || e.code === 404) { this.state = 'error'; this.error = e.message; changed(); return; }
        this.error = e.message; changed();
        rv = '';
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
  async relist() {
    const body = await api(this.url, { signal: this.ctrl.signal });
    this.items = new Map((body.items || []).map((o) => [key(o), o]));
    this.state = 'ready';
    this.error = '';
    changed();
    return body.metadata.resourceVersion;
  }
  // Reads one watch to its end; returns the resourceVersion to resume from
  // ('' to list again).
  async watch(rv) {
    const sep = this.url.includes('?') ? '&' : '?';
    const url = `${this.url}${sep}watch=1&allowWatchBookmarks=true&timeoutSeconds=${WATCH_SECONDS}&resourceVersion=${enc(rv)}`;
    const res = await fetch(url, { headers: headers(), signal: this.ctrl.signal });
    if (res.status === 410) return '';
    if (res.status === 401) { showLogin('The server refused the token (401 Unauthorized).'); throw new HttpError(401, 'Unauthorized'); }
    if (!res.ok) throw new HttpError(res.status, res.statusText);
    this.watching = true; changed();
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        const ev = JSON.parse(line);
        const o = ev.object || {};
        if (ev.type === 'ERROR') { this.watching = false; return o.code === 410 ? '' : rv; }
        if (o.metadata && o.metadata.resourceVersion) rv = o.metadata.resourceVersion;
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.items.set(key(o), o);
        else if (ev.type === 'DELETED') this.items.delete(key(o));
        else continue;  // BOOKMARK: only the resourceVersion.
        changed();
      }
    }
    this.watching = false;
    return rv;
  }
}

// Feeds by URL; a view names the ones it needs and the rest are stopped
// (a browser keeps at most 6 connections to one server over HTTP/1.1).
const feeds = new Map();
function useFeeds(urls) {
  for (const [u, f] of feeds) if (!urls.includes(u)) { f.stop(); feeds.delete(u); }
  for (const u of urls) if (!feeds.has(u)) feeds.set(u, new Feed(u));
  return urls.map((u) => feeds.get(u));
}
function feedProblem(fs) {
  const bad = fs.find((f) => f.state === 'error');
  if (bad) return `<p class="error">Cannot read ${esc(bad.url)}: ${esc(bad.error)}</p>`;
  if (fs.some((f) => f.state === 'loading')) return '<p class="muted">Loading…</p>';
  return '';
}

// ---------- who is looking, and what may they do ----------
const access = new Map();  // "verb group resource ns" -> Promise<bool>
function may(verb, group, resource, ns) {
  const k = [verb, group, resource, ns || ''].join(' ');
  if (!access.has(k)) {
    const body = JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb, group, resource, namespace: ns || '' } } });
    access.set(k, api('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { method: 'POST', body,
      headers: { 'Content-Type': 'application/json' } })
      .then((r) => !!(r.status && r.status.allowed)).catch(() => false)
      .then((v) => { changed(); return v; }));
  }
  return access.get(k);
}
// The answer if known (false until it is).
const known = new Map();
function mayNow(verb, group, resource, ns) {
  const k = [verb, group, resource, ns || ''].join(' ');
  if (!known.has(k)) { known.set(k, false); may(verb, group, resource, ns).then((v) => known.set(k, v)); }
  return known.get(k);
}
async function whoAmI() {
  try {
    const r = await api('/apis/authentication.k8s.io/v1/selfsubjectreviews', { method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }) });
    const user = ((r.status || {}).userInfo || {}).username || '';
    // Not logged in and not the loopback admin: anonymous may see nothing.
    if (user === 'system:anonymous') { showLogin(''); return false; }
    $('#user').textContent = user;
    const write = await may('patch', 'kueue.x-k8s.io', 'clusterqueues') || await may('delete', 'batch', 'jobs');
    $('#mode').textContent = write ? '' : 'read-only';
    document.body.dataset.mode = write ? 'write' : 'read-only';
    return true;
  } catch (e) {
    if (e.code === 403 && !token()) showLogin('');
    return false;
  }
}

// ---------- rendering ----------
// Redraws are coalesced: at most one per 50 ms, or per four times the last
// redraw's cost when that is more (a big table on a slow phone), never
// later than 500 ms after a change.
let renderTimer = null;
let renderMs = 0;
function changed() {
  if (renderTimer !== null) return;
  renderTimer = setTimeout(() => {
    renderTimer = null;
    const t0 = performance.now();
    render();
    renderMs = performance.now() - t0;
  }, Math.min(500, Math.max(50, 4 * renderMs)));
}
let loginMessage = null;
function showLogin(msg) {
  if (loginMessage === null) {
    loginMessage = msg || '';
    useFeeds([]);
    changed();
  }
}

function parseHash() {
  const h = location.hash.replace(/^#\/?/, '');
  const [path, q] = h.split('?');
  const parts = path.split('/').filter((p) => p !== '').map(decodeURIComponent);
  return { parts, query: new URLSearchParams(q || '') };
}

function render() {
  const live = $('#live');
  const fs = [...feeds.values()];
  const on = fs.length > 0 && fs.every((f) => f.watching);
  live.textContent = on ? 'live' : fs.some((f) => f.error) ? 'reconnecting' : 'connecting';
  live.className = 'live ' + (on ? 'on' : 'off');
  document.body.dataset.live = on ? '1' : '0';
  $('#logout').hidden = !token();
  if (loginMessage !== null) return renderLogin();
  const { parts, query } = parseHash();
  const route = ROUTES[parts[0] || ''];
  document.querySelectorAll('#nav a').forEach((a) => a.classList.toggle('on', a.dataset.nav === (route ? route.nav : '')));
  let html;
  if (!route) { useFeeds([]); html = notFound('page', '#/' + parts.join('/')); }
  else html = route.view(parts.slice(1), query);
  const view = $('#view');
  document.body.dataset.view = route ? route.nav : 'notfound';
  // Keep the page where the reader is when it is redrawn.
  const y = window.scrollY;
  view.innerHTML = html;
  window.scrollTo(0, y);
  // Widths and colours are set through the CSSOM: the page's
  // Content-Security-Policy allows no inline style attributes.
  view.querySelectorAll('[data-w]').forEach((e) => { e.style.width = e.dataset.w + '%'; });
  view.querySelectorAll('[data-x]').forEach((e) => { e.style.left = e.dataset.x + '%'; });
  view.querySelectorAll('[data-heat]').forEach((e) => { e.style.backgroundColor = heatColor(+e.dataset.heat); });
}
function notFound(what, name) {
  document.title = 'Not found - batchd';
  return `<h1 id="page-title" data-notfound="1">Not found</h1><p>There is no ${esc(what)} <b>${esc(name)}</b>` +
    ` (it may have been deleted, or never existed).</p><p><a href="#/">Back to the overview</a></p>`;
}
function title(t) { document.title = t + ' - batchd'; return `<h1 id="page-title">${esc(t)}</h1>`; }

function renderLogin() {
  document.body.dataset.view = 'login';
  document.title = 'Log in - batchd';
  // Redraws must not wipe a token being typed: only the message changes.
  const err = $('#login-error');
  if ($('#login-form') && (err ? err.textContent : '') === (loginMessage || '')) return;
  if ($('#login-form') && err && loginMessage) { err.textContent = loginMessage; return; }
  $('#view').innerHTML = `<form class="login" id="login-form"><h1 id="page-title">Log in</h1>
    <p>Paste a bearer token: the admin token (<code>DATA_DIR/admin.token</code>), a
    <code>--token-auth-file</code> token or a service account's (<code>kubectl create token NAME</code>).
    It is kept in this tab's session storage only.</p>
    ${loginMessage ? `<p class="error" id="login-error">${esc(loginMessage)}</p>` : ''}
    <textarea id="token" name="token" autocomplete="off" spellcheck="false" required></textarea>
    <p><button type="submit">Log in</button></p></form>`;
}
document.addEventListener('submit', async (e) => {
  if (e.target.id !== 'login-form') return;
  e.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $('#token').value.trim());
  loginMessage = null;
  access.clear(); known.clear();
  if (await whoAmI()) { if (!location.hash || location.hash === '#/login') location.hash = '#/'; changed(); }
});
document.addEventListener('click', async (e) => {
  const b = e.target.closest('[data-action]');
  if (!b) return;
  if (b.id === 'logout') {
    sessionStorage.removeItem(TOKEN_KEY);
    access.clear(); known.clear();
    showLogin('Logged out.');
    return;
  }
  const act = ACTIONS[b.dataset.action];
  if (!act) return;
  const what = b.dataset.confirm;
  if (what && !confirm(what)) return;
  b.disabled = true;
  try { await act(b.dataset); } catch (err) { alert(err.message); }
  b.disabled = false;
});
window.addEventListener('hashchange', () => { podLog.key = ''; changed(); });
setInterval(changed, 10000);  // Ages move on.

// ---------- write actions (shown only when a SelfSubjectAccessReview allows them) ----------
const ACTIONS = {
  async 'cq-stop'(d) {
    await api(`${PATHS.clusterqueues}/${enc(d.name)}`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { stopPolicy: d.policy } }) });
  },
  async 'job-delete'(d) {
    await api(`/apis/batch/v1/namespaces/${enc(d.ns)}/jobs/${enc(d.name)}`, { method: 'DELETE', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' }) });
    location.hash = '#/jobs';
  },
  async 'log-refresh'() { podLog.key = ''; changed(); },
};

// ---------- queues ----------
// The quota of each flavor/resource of a ClusterQueue with its usage.
function quotaRows(cq) {
  const usage = new Map();
  for (const f of (cq.status || {}).flavorsReservation || (cq.status || {}).flavorsUsage || []) {
    for (const r of f.resources || []) usage.set(f.name + '/' + r.name, r);
  }
  const rows = [];
  for (const g of (cq.spec || {}).resourceGroups || []) {
    for (const f of g.flavors || []) {
      for (const r of f.resources || []) {
        const u = usage.get(f.name + '/' + r.name) || {};
        rows.push({ flavor: f.name, resource: r.name, nominal: qty(r.nominalQuota), used: qty(u.total), borrowed: qty(u.borrowed),
          borrowingLimit: r.borrowingLimit === undefined ? null : qty(r.borrowingLimit),
          lendingLimit: r.lendingLimit === undefined ? null : qty(r.lendingLimit), usedText: u.total || '0' });
      }
    }
  }
  return rows;
}
function bar(cq, r) {
  const over = Math.max(0, r.used - r.nominal);
  const scale = Math.max(r.nominal + (r.borrowingLimit ?? over), r.used, r.nominal, 1e-9);
  const pct = (v) => Math.max(0, Math.min(100, (100 * v) / scale)).toFixed(2);
  const inNominal = Math.min(r.used, r.nominal);
  let text = `${fmtNum(r.used, r.resource)} / ${fmtNum(r.nominal, r.resource)}`;
  if (r.borrowed > 0 || over > 0) text += `, borrowing ${fmtNum(Math.max(r.borrowed, over), r.resource)}`;
  if (r.borrowingLimit !== null) text += `, may borrow ≤ ${fmtNum(r.borrowingLimit, r.resource)}`;
  if (r.lendingLimit !== null) text += `, lends ≤ ${fmtNum(r.lendingLimit, r.resource)}`;
  const lend = r.lendingLimit === null ? '' :
    `<span class="seg lend" data-x="${pct(r.nominal - Math.min(r.lendingLimit, r.nominal))}" data-w="${pct(Math.min(r.lendingLimit, r.nominal))}"></span>`;
  return `<div class="label">${esc(r.flavor)} · ${esc(r.resource)}</div>
    <div><div class="bar" data-cq="${esc(cq)}" data-flavor="${esc(r.flavor)}" data-resource="${esc(r.resource)}" data-used="${r.used}" data-nominal="${r.nominal}" title="${esc(text)}">
    ${lend}<span class="seg used" data-w="${pct(inNominal)}"></span>
    <span class="seg borrowed" data-x="${pct(inNominal)}" data-w="${pct(over)}"></span>
    <span class="nominal" data-x="${pct(r.nominal)}"></span></div>
    <div class="usage-text">${esc(text)}</div></div>`;
}
const LEGEND = '<div class="legend"><span><i class="used"></i>used within nominal quota</span><span><i class="borrowed"></i>borrowed</span>' +
  '<span><i class="lend"></i>lendable (lendingLimit)</span><span><i class="nominal"></i>nominal quota</span></div>';
function cqState(cq) {
  const stop = (cq.spec || {}).stopPolicy;
  if (stop && stop !== 'None') return H(`<span class="st-wait">stopped (${esc(stop)})</span>`);
  const a = cond(cq, 'Active');
  if (!a) return H('<span class="muted">unknown</span>');
  return a.status === 'True' ? H('<span class="st-ok">active</span>') : H(`<span class="st-bad" title="${esc(a.message)}">inactive: ${esc(a.reason)}</span>`);
}
function cqCard(cq) {
  const s = cq.status || {};
  return `<div class="node" data-cq-card="${esc(cq.metadata.name)}"><div class="head"><span class="kind">ClusterQueue</span>
    <a href="#/clusterqueues/${enc(cq.metadata.name)}"><b>${esc(cq.metadata.name)}</b></a> ${cqState(cq).html}
    <span class="muted">pending ${s.pendingWorkloads || 0} · reserving ${s.reservingWorkloads || 0} · admitted ${s.admittedWorkloads || 0}</span></div>
    <div class="rows">${quotaRows(cq).map((r) => bar(cq.metadata.name, r)).join('') || '<div class="muted">no quota</div>'}</div></div>`;
}
function viewClusterQueues() {
  const fs = useFeeds([PATHS.clusterqueues, PATHS.cohorts]);
  const [cqs, cohorts] = fs;
  const problem = feedProblem([cqs]);
  if (problem) return title('ClusterQueues and cohorts') + problem;
  // The cohort tree: Cohort objects (spec.parentName) and the cohorts the
  // ClusterQueues name (which exist implicitly).
  const parent = new Map();
  for (const c of cohorts.list()) parent.set(c.metadata.name, (c.spec || {}).parentName || '');
  for (const cq of cqs.list()) { const c = (cq.spec || {}).cohortName; if (c && !parent.has(c)) parent.set(c, ''); }
  const kids = new Map(); const queues = new Map();
  for (const [c, p] of parent) { if (!kids.has(p)) kids.set(p, []); kids.get(p).push(c); }
  for (const cq of cqs.list()) { const c = (cq.spec || {}).cohortName || ''; if (!queues.has(c)) queues.set(c, []); queues.get(c).push(cq); }
  const seen = new Set();
  const cohortObj = new Map(cohorts.list().map((c) => [c.metadata.name, c]));
  function sub(name) {
    if (seen.has(name)) return '';  // A cycle (refused by validation, but never loop).
    seen.add(name);
    const c = cohortObj.get(name);
    const rows = c ? quotaRows(c) : [];
    const inner = (queues.get(name) || []).sort(byName).map((q) => `<li>${cqCard(q)}</li>`).join('') +
      (kids.get(name) || []).sort().map((k) => sub(k)).join('');
    return `<li><div class="node" data-cohort="${esc(name)}"><div class="head"><span class="kind">Cohort</span><b>${esc(name)}</b>` +
      `${c ? '' : ' <span class="muted">(implicit)</span>'}</div>` +
      `${rows.length ? `<div class="rows">${rows.map((r) => bar('cohort:' + name, r)).join('')}</div>` : ''}` +
      `<ul class="tree">${inner}</ul></div></li>`;
  }
  const roots = (kids.get('') || []).sort().map((k) => sub(k)).join('');
  const alone = (queues.get('') || []).sort(byName).map((q) => `<li>${cqCard(q)}</li>`).join('');
  return title('ClusterQueues and cohorts') + LEGEND +
    (roots || alone ? `<ul class="tree root">${roots}${alone}</ul>` : '<p class="muted">No ClusterQueues yet.</p>');
}

// The pending workloads of each ClusterQueue in admission order (priority,
// then the time the workload entered the queue, as Kueue orders them).
function lqIndex(lqs) { return new Map(lqs.map((q) => [key(q), (q.spec || {}).clusterQueue])); }
function wlPhase(w) {
  if (isTrue(w, 'Finished')) return 'finished';
  if (isTrue(w, 'Admitted')) return 'admitted';
  if (isTrue(w, 'QuotaReserved')) return 'reserving';
  return 'pending';
}
function queuedAt(w) {
  const ev = cond(w, 'Requeued') || cond(w, 'Evicted');
  return Date.parse((ev && ev.status === 'True' && ev.lastTransitionTime) || w.metadata.creationTimestamp) || 0;
}
function pendingOrder(wls, lqmap) {
  const byCq = new Map();
  for (const w of wls) {
    if (wlPhase(w) !== 'pending') continue;
    const cq = lqmap.get(w.metadata.namespace + '/' + (w.spec || {}).queueName) || '';
    if (!byCq.has(cq)) byCq.set(cq, []);
    byCq.get(cq).push(w);
  }
  for (const list of byCq.values()) {
    list.sort((a, b) => ((b.spec || {}).priority || 0) - ((a.spec || {}).priority || 0) || queuedAt(a) - queuedAt(b) || (byName(a, b)));
  }
  return byCq;
}
function blocker(w) {
  const c = cond(w, 'QuotaReserved');
  if (c && c.status === 'False') return c.message || c.reason;
  const q = cond(w, 'Evicted');
  if (q && q.status === 'True') return 'evicted: ' + (q.message || q.reason);
  return 'waiting for the next admission cycle';
}
function pendingTable(byCq, only) {
  const rows = [];
  for (const [cq, list] of [...byCq].sort()) {
    if (only !== undefined && cq !== only) continue;
    list.forEach((w, i) => rows.push([String(i + 1), link(`#/workloads/${enc(w.metadata.namespace)}/${enc(w.metadata.name)}`, w.metadata.name),
      w.metadata.namespace, (w.spec || {}).queueName || '', cq ? link('#/clusterqueues/' + enc(cq), cq) : H('<span class="st-bad">no such LocalQueue</span>'),
      String((w.spec || {}).priority || 0), age(w.metadata.creationTimestamp), H(esc(blocker(w)), 'msg')]));
  }
  return table(['#', 'Workload', 'Namespace', 'LocalQueue', 'ClusterQueue', 'Priority', 'Age', 'Waiting for'], rows, 'No pending workloads.');
}
function viewClusterQueue(args) {
  const name = args[0];
  const fs = useFeeds([PATHS.clusterqueues, PATHS.localqueues, PATHS.workloads]);
  const problem = feedProblem(fs);
  if (problem) return title('ClusterQueue ' + name) + problem;
  const cq = fs[0].items.get(name);
  if (!cq) return notFound('ClusterQueue', name);
  const lqs = fs[1].list().filter((q) => (q.spec || {}).clusterQueue === name).sort(byName);
  const byCq = pendingOrder(fs[2].list(), lqIndex(fs[1].list()));
  const stopped = (cq.spec || {}).stopPolicy && cq.spec.stopPolicy !== 'None';
  const actions = mayNow('patch', 'kueue.x-k8s.io', 'clusterqueues') ? `<div class="actions">${stopped
    ? `<button data-action="cq-stop" data-name="${esc(name)}" data-policy="None">Resume</button>`
    : `<button class="danger" data-action="cq-stop" data-name="${esc(name)}" data-policy="Hold" data-confirm="Stop admitting to ${esc(name)}?">Stop (Hold)</button>`}</div>` : '';
  const s = cq.spec || {};
  return title('ClusterQueue ' + name) + actions +
    `<dl class="kv"><dt>State</dt><dd>${cqState(cq).html}</dd><dt>Cohort</dt><dd>${esc(s.cohortName || '—')}</dd>` +
    `<dt>Queueing</dt><dd>${esc(s.queueingStrategy || 'BestEffortFIFO')}</dd><dt>Preemption</dt><dd>${esc(flat(s.preemption) || 'none')}</dd></dl>` +
    '<h2>Quota and usage</h2>' + LEGEND + cqCard(cq) +
    '<h2>LocalQueues</h2>' + lqTable(lqs) +
    '<h2>Pending, in admission order</h2>' + pendingTable(byCq, name);
}
// {"a":{"b":"X"},"c":"Y"} as "a.b: X, c: Y".
function flat(o, prefix) {
  if (o === null || typeof o !== 'object') return o === undefined ? '' : `${prefix}: ${o}`;
  return Object.entries(o).map(([k, v]) => flat(v, prefix ? prefix + '.' + k : k)).filter((x) => x).join(', ');
}
function lqTable(lqs) {
  return table(['LocalQueue', 'Namespace', 'ClusterQueue', 'Pending', 'Reserving', 'Admitted', 'Usage'], lqs.map((q) => {
    const s = q.status || {};
    const use = (s.flavorsUsage || s.flavorUsage || []).flatMap((f) => (f.resources || []).filter((r) => qty(r.total) > 0).map((r) => `${f.name}/${r.name} ${r.total}`)).join(', ');
    return [q.metadata.name, q.metadata.namespace, link('#/clusterqueues/' + enc((q.spec || {}).clusterQueue), (q.spec || {}).clusterQueue),
      String(s.pendingWorkloads || 0), String(s.reservingWorkloads || 0), String(s.admittedWorkloads || 0), H(esc(use || '—'), 'msg')];
  }), 'No LocalQueues.');
}
function viewLocalQueues() {
  const fs = useFeeds([PATHS.localqueues]);
  return title('LocalQueues') + (feedProblem(fs) || lqTable(fs[0].list().sort(byName)));
}

// ---------- workloads ----------
function flavorsOf(w) {
  return (((w.status || {}).admission || {}).podSetAssignments || []).map((p) => Object.entries(p.flavors || {}).map(([r, f]) => `${r}: ${f}`).join(', ')).join('; ');
}
function viewWorkloads(args) {
  if (args.length >= 2) return viewWorkload(args);
  const tab = args[0] || 'pending';
  const fs = useFeeds([PATHS.workloads, PATHS.localqueues]);
  const tabs = ['pending', 'admitted', 'finished'].map((t) => `<a href="#/workloads/${t}" class="${t === tab ? 'on' : ''}">${t}</a>`).join('');
  let body = feedProblem(fs);
  if (!body) {
    const wls = fs[0].list();
    if (tab === 'pending') body = pendingTable(pendingOrder(wls, lqIndex(fs[1].list())));
    else if (tab === 'admitted') {
      body = table(['Workload', 'Namespace', 'ClusterQueue', 'State', 'Flavors', 'Since'], wls.filter((w) => ['admitted', 'reserving'].includes(wlPhase(w))).sort(byName).map((w) => {
        const c = cond(w, 'Admitted') || cond(w, 'QuotaReserved') || {};
        return [link(`#/workloads/${enc(w.metadata.namespace)}/${enc(w.metadata.name)}`, w.metadata.name), w.metadata.namespace,
          ((w.status || {}).admission || {}).clusterQueue || '', wlPhase(w), H(esc(flavorsOf(w)), 'msg'), age(c.lastTransitionTime)];
      }), 'No admitted workloads.');
    } else {
      body = table(['Workload', 'Namespace', 'Result', 'Message', 'Finished'], wls.filter((w) => wlPhase(w) === 'finished').sort((a, b) =>
        Date.parse(cond(b, 'Finished').lastTransitionTime || 0) - Date.parse(cond(a, 'Finished').lastTransitionTime || 0)).map((w) => {
        const c = cond(w, 'Finished');
        return [link(`#/workloads/${enc(w.metadata.namespace)}/${enc(w.metadata.name)}`, w.metadata.name), w.metadata.namespace,
          H(`<span class="${/fail/i.test(c.reason) ? 'st-bad' : 'st-ok'}">${esc(c.reason)}</span>`), H(esc(c.message), 'msg'), age(c.lastTransitionTime)];
      }), 'No finished workloads.');
    }
  }
  return title('Workloads') + `<div class="tabs">${tabs}</div>` + body;
}
function conditionsTable(o) {
  return table(['Condition', 'Status', 'Reason', 'Message', 'Changed'], ((o.status || {}).conditions || []).map((c) =>
    [c.type, c.status, c.reason || '', H(esc(c.message || ''), 'msg'), age(c.lastTransitionTime)]), 'No conditions.');
}
function ownerLink(o) {
  return (o.metadata.ownerReferences || []).map((r) => {
    const ns = enc(o.metadata.namespace);
    if (r.kind === 'Job') return `<a href="#/jobs/${ns}/${enc(r.name)}">Job ${esc(r.name)}</a>`;
    if (r.kind === 'JobSet') return `<a href="#/jobsets/${ns}/${enc(r.name)}">JobSet ${esc(r.name)}</a>`;
    return `${esc(r.kind)} ${esc(r.name)}`;
  }).join(', ') || '—';
}
function viewWorkload(args) {
  const [ns, name] = args;
  const fs = useFeeds([PATHS.workloads, PATHS.localqueues]);
  const problem = feedProblem(fs);
  if (problem) return title('Workload ' + name) + problem;
  const w = fs[0].items.get(ns + '/' + name);
  if (!w) return notFound('Workload', ns + '/' + name);
  const phase = wlPhase(w);
  let pos = '';
  if (phase === 'pending') {
    const byCq = pendingOrder(fs[0].list(), lqIndex(fs[1].list()));
    for (const [cq, list] of byCq) {
      const i = list.indexOf(w);
      if (i >= 0) pos = `<dt>Position</dt><dd>${i + 1} of ${list.length} pending in ${esc(cq || '(unknown ClusterQueue)')}</dd><dt>Waiting for</dt><dd>${esc(blocker(w))}</dd>`;
    }
  }
  const podSets = table(['PodSet', 'Count', 'Requests (each)'], ((w.spec || {}).podSets || []).map((p) => {
    const req = {};
    for (const c of (((p.template || {}).spec || {}).containers || [])) {
      for (const [r, v] of Object.entries(((c.resources || {}).requests) || {})) req[r] = (req[r] || 0) + qty(v);
    }
    return [p.name, String(p.count), Object.entries(req).map(([r, v]) => `${r} ${fmtNum(v, r)}`).join(', ')];
  }));
  return title('Workload ' + name) + `<dl class="kv"><dt>Namespace</dt><dd>${esc(ns)}</dd><dt>State</dt><dd>${esc(phase)}</dd>` +
    `<dt>LocalQueue</dt><dd>${esc((w.spec || {}).queueName || '')}</dd><dt>ClusterQueue</dt><dd>${esc(((w.status || {}).admission || {}).clusterQueue || '—')}</dd>` +
    `<dt>Flavors</dt><dd>${esc(flavorsOf(w) || '—')}</dd><dt>Priority</dt><dd>${esc((w.spec || {}).priority || 0)}</dd><dt>Owner</dt><dd>${ownerLink(w)}</dd>${pos}</dl>` +
    '<h2>Pod sets</h2>' + podSets + '<h2>Conditions</h2>' + conditionsTable(w);
}

// ---------- jobs, jobsets, pods ----------
function jobState(j) {
  const s = j.status || {};
  if (isTrue(j, 'Complete')) return H('<span class="st-ok">Complete</span>');
  if (isTrue(j, 'Failed')) return H(`<span class="st-bad">Failed: ${esc(cond(j, 'Failed').reason)}</span>`);
  if ((j.spec || {}).suspend) return H('<span class="st-wait">Suspended</span>');
  return H(s.active ? '<span>Running</span>' : '<span class="muted">Starting</span>');
}
function jobRows(jobs) {
  return jobs.sort(byName).map((j) => {
    const s = j.status || {};
    return [link(`#/jobs/${enc(j.metadata.namespace)}/${enc(j.metadata.name)}`, j.metadata.name), j.metadata.namespace,
      ((j.metadata.labels || {})['kueue.x-k8s.io/queue-name']) || '—', jobState(j),
      `${s.active || 0} / ${s.succeeded || 0} / ${s.failed || 0}`, String((j.spec || {}).completions ?? ''), age(j.metadata.creationTimestamp)];
  });
}
const JOB_COLS = ['Job', 'Namespace', 'Queue', 'State', 'Active / Succeeded / Failed', 'Completions', 'Age'];
function viewJobs(args) {
  if (args.length >= 2) return viewJob(args);
  const fs = useFeeds([PATHS.jobs, PATHS.jobsets]);
  const [jobs, sets] = fs;
  let html = title('Jobs and JobSets') + '<h2>JobSets</h2>';
  html += sets.state === 'error' ? `<p class="muted">JobSets: ${esc(sets.error)}</p>` : table(['JobSet', 'Namespace', 'Replicated jobs', 'State', 'Restarts', 'Age'],
    sets.list().sort(byName).map((s) => [link(`#/jobsets/${enc(s.metadata.namespace)}/${enc(s.metadata.name)}`, s.metadata.name), s.metadata.namespace,
      ((s.spec || {}).replicatedJobs || []).map((r) => `${r.name}×${r.replicas ?? 1}`).join(', '),
      isTrue(s, 'Completed') ? H('<span class="st-ok">Completed</span>') : isTrue(s, 'Failed') ? H('<span class="st-bad">Failed</span>') : (s.spec || {}).suspend ? H('<span class="st-wait">Suspended</span>') : 'Running',
      String((s.status || {}).restarts || 0), age(s.metadata.creationTimestamp)]), 'No JobSets.');
  html += '<h2>Jobs</h2>' + (feedProblem([jobs]) || table(JOB_COLS, jobRows(jobs.list()), 'No Jobs.'));
  return html;
}
function podRows(pods) {
  return pods.sort(byName).map((p) => {
    const cs = (p.status || {}).containerStatuses || [];
    return [link(`#/pods/${enc(p.metadata.namespace)}/${enc(p.metadata.name)}`, p.metadata.name), (p.status || {}).phase || 'Pending',
      (p.spec || {}).nodeName || '—', String(cs.reduce((n, c) => n + (c.restartCount || 0), 0)), age(p.metadata.creationTimestamp),
      link(`#/pods/${enc(p.metadata.namespace)}/${enc(p.metadata.name)}`, 'logs')];
  });
}
function viewJob(args) {
  const [ns, name] = args;
  const one = `/apis/batch/v1/namespaces/${enc(ns)}/jobs?fieldSelector=${enc('metadata.name=' + name)}`;
  const pods = `/api/v1/namespaces/${enc(ns)}/pods?labelSelector=${enc('job-name=' + name)}`;
  const fs = useFeeds([one, pods]);
  const problem = feedProblem(fs);
  if (problem) return title('Job ' + name) + problem;
  const j = fs[0].items.get(ns + '/' + name);
  if (!j) return notFound('Job', ns + '/' + name);
  const actions = mayNow('delete', 'batch', 'jobs', ns)
    ? `<div class="actions"><button class="danger" data-action="job-delete" data-ns="${esc(ns)}" data-name="${esc(name)}" data-confirm="Delete Job ${esc(name)} and its pods?">Delete</button></div>` : '';
  return title('Job ' + name) + actions + table(JOB_COLS, jobRows([j])) + `<p>Owner: ${ownerLink(j)}</p>` +
    '<h2>Pods</h2>' + table(['Pod', 'Phase', 'Node', 'Restarts', 'Age', ''], podRows(fs[1].list()), 'No pods.') +
    '<h2>Conditions</h2>' + conditionsTable(j);
}
function viewJobSet(args) {
  const [ns, name] = args;
  const one = `/apis/jobset.x-k8s.io/v1alpha2/namespaces/${enc(ns)}/jobsets?fieldSelector=${enc('metadata.name=' + name)}`;
  const jobs = `/apis/batch/v1/namespaces/${enc(ns)}/jobs?labelSelector=${enc('jobset.sigs.k8s.io/jobset-name=' + name)}`;
  const fs = useFeeds([one, jobs]);
  const problem = feedProblem(fs);
  if (problem) return title('JobSet ' + name) + problem;
  const s = fs[0].items.get(ns + '/' + name);
  if (!s) return notFound('JobSet', ns + '/' + name);
  return title('JobSet ' + name) + '<h2>Jobs</h2>' + table(JOB_COLS, jobRows(fs[1].list()), 'No Jobs yet.') +
    '<h2>Conditions</h2>' + conditionsTable(s);
}
const podLog = { key: '', text: '', error: '' };
function viewPod(args, query) {
  const [ns, name] = args;
  const one = `/api/v1/namespaces/${enc(ns)}/pods?fieldSelector=${enc('metadata.name=' + name)}`;
  const fs = useFeeds([one]);
  const problem = feedProblem(fs);
  if (problem) return title('Pod ' + name) + problem;
  const p = fs[0].items.get(ns + '/' + name);
  if (!p) return notFound('Pod', ns + '/' + name);
  const containers = ((p.spec || {}).containers || []).map((c) => c.name);
  const c = query.get('container') || containers[0] || '';
  const k = `${ns}/${name}/${c}`;
  if (podLog.key !== k) {
    podLog.key = k; podLog.text = ''; podLog.error = 'loading…';
    api(`/api/v1/namespaces/${enc(ns)}/pods/${enc(name)}/log?container=${enc(c)}&tailLines=1000`, { text: true })
      .then((t) => { if (podLog.key === k) { podLog.text = t; podLog.error = ''; changed(); } })
      .catch((e) => { if (podLog.key === k) { podLog.error = e.message; changed(); } });
  }
  const tabs = containers.map((n) => `<a href="#/pods/${enc(ns)}/${enc(name)}?container=${enc(n)}" class="${n === c ? 'on' : ''}">${esc(n)}</a>`).join('');
  return title('Pod ' + name) + `<dl class="kv"><dt>Namespace</dt><dd>${esc(ns)}</dd><dt>Phase</dt><dd>${esc((p.status || {}).phase || 'Pending')}</dd>` +
    `<dt>Node</dt><dd>${esc((p.spec || {}).nodeName || '—')}</dd><dt>Owner</dt><dd>${ownerLink(p)}</dd></dl>` +
    `<h2>Log (last 1000 lines)</h2><div class="tabs">${tabs}</div><div class="actions"><button data-action="log-refresh">Refresh</button></div>` +
    (podLog.error ? `<p class="muted">${esc(podLog.error)}</p>` : '') + `<pre class="log" id="log">${esc(podLog.text)}</pre>` +
    '<h2>Conditions</h2>' + conditionsTable(p);
}

// ---------- nodes by topology ----------
function podRequests(p) {
  const sum = {};
  for (const c of (p.spec || {}).containers || []) {
    const r = Object.assign({}, (c.resources || {}).limits || {}, (c.resources || {}).requests || {});
    for (const [k, v] of Object.entries(r)) sum[k] = (sum[k] || 0) + qty(v);
  }
  for (const c of (p.spec || {}).initContainers || []) {
    const r = Object.assign({}, (c.resources || {}).limits || {}, (c.resources || {}).requests || {});
    for (const [k, v] of Object.entries(r)) sum[k] = Math.max(sum[k] || 0, qty(v));
  }
  return sum;
}
function heatColor(f) {
  const x = Math.max(0, Math.min(1, f));
  return `hsl(${Math.round(120 * (1 - x))}, ${55 + 20 * x}%, ${85 - 25 * x}%)`;
}
function viewNodes(args) {
  const fs = useFeeds([PATHS.nodes, PATHS.topologies, PATHS.pods]);
  const [nodes, topos, pods] = fs;
  const problem = feedProblem([nodes, pods]);
  if (problem) return title('Nodes') + problem;
  const alloc = new Map();
  for (const p of pods.list()) {
    const n = (p.spec || {}).nodeName; const ph = (p.status || {}).phase;
    if (!n || ph === 'Succeeded' || ph === 'Failed') continue;
    const a = alloc.get(n) || {};
    for (const [k, v] of Object.entries(podRequests(p))) a[k] = (a[k] || 0) + v;
    alloc.set(n, a);
  }
  const topoList = topos.list().sort(byName);
  const topo = topoList.find((t) => t.metadata.name === args[0]) || topoList[0];
  if (args[0] && (!topo || topo.metadata.name !== args[0]) && topos.state === 'ready') return notFound('Topology', args[0]);
  const levels = topo ? ((topo.spec || {}).levels || []).map((l) => l.nodeLabel) : [];
  // Group by every level but the last (the host level, when it is the hostname).
  const groupLevels = levels.length && levels[levels.length - 1] === 'kubernetes.io/hostname' ? levels.slice(0, -1) : levels;
  const root = { name: '', kids: new Map(), nodes: [] };
  const list = nodes.list().sort(byName);
  for (const n of list) {
    let g = root;
    for (const l of groupLevels) {
      const v = ((n.metadata.labels || {})[l]) ?? '(none)';
      if (!g.kids.has(v)) g.kids.set(v, { name: v, label: l, kids: new Map(), nodes: [] });
      g = g.kids.get(v);
    }
    g.nodes.push(n);
  }
  function cell(n) {
    const allocatable = (n.status || {}).allocatable || (n.status || {}).capacity || {};
    const a = alloc.get(n.metadata.name) || {};
    let frac = 0; const parts = [];
    for (const r of ['cpu', 'memory', 'nvidia.com/gpu']) {
      const cap = qty(allocatable[r]);
      if (cap <= 0) continue;
      const f = (a[r] || 0) / cap;
      frac = Math.max(frac, f);
      parts.push(`${r} ${fmtNum(a[r] || 0, r)}/${fmtNum(cap, r)}`);
    }
    const ready = isTrue(n, 'Ready');
    return `<div class="cell${ready ? '' : ' notready'}" data-node="${esc(n.metadata.name)}" data-heat="${frac.toFixed(3)}" title="${esc(n.metadata.name + (ready ? '' : ' (NotReady)') + ': ' + parts.join(', '))}">` +
      `<b>${Math.round(frac * 100)}%</b>${esc(n.metadata.name)}</div>`;
  }
  function group(g) {
    const kids = [...g.kids.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map(group).join('');
    const inner = kids ? `<div class="heat-groups">${kids}</div>` : '';
    const cells = g.nodes.length ? `<div class="heat">${g.nodes.slice(0, 2000).map(cell).join('')}</div>` : '';
    if (!g.label) return inner + cells;
    return `<div class="heat-group" data-level="${esc(g.label)}" data-value="${esc(g.name)}"><span class="kind">${esc(g.label)}</span> <b>${esc(g.name)}</b>` +
      ` <span class="muted">${count(g)} nodes</span>${inner}${cells}</div>`;
  }
  function count(g) { return g.nodes.length + [...g.kids.values()].reduce((s, k) => s + count(k), 0); }
  const choose = topoList.length > 1 ? `<div class="tabs">${topoList.map((t) => `<a href="#/nodes/${enc(t.metadata.name)}" class="${t === topo ? 'on' : ''}">${esc(t.metadata.name)}</a>`).join('')}</div>` : '';
  const ready = list.filter((n) => isTrue(n, 'Ready')).length;
  return title('Nodes') + choose + `<p class="muted">${list.length} nodes, ${ready} Ready. ` +
    (topo ? `Grouped by Topology <b>${esc(topo.metadata.name)}</b>: ${levels.map(esc).join(' → ')}.` : 'No Topology object: one group.') +
    ` Colour: the most allocated of cpu, memory and GPUs (requests of the pods bound there) <span class="scale"></span> 0 → 100%; dashed: NotReady.</p>` +
    (list.length ? group(root) : '<p class="muted">No nodes.</p>');
}

// ---------- overview ----------
function viewOverview() {
  const fs = useFeeds([PATHS.clusterqueues, PATHS.workloads, PATHS.nodes, PATHS.localqueues]);
  const [cqs, wls, nodes, lqs] = fs;
  const problem = feedProblem(fs);
  if (problem) return title('Overview') + problem;
  const phases = { pending: 0, reserving: 0, admitted: 0, finished: 0 };
  for (const w of wls.list()) phases[wlPhase(w)]++;
  const ready = nodes.list().filter((n) => isTrue(n, 'Ready')).length;
  const active = cqs.list().filter((q) => isTrue(q, 'Active')).length;
  const card = (n, l, href, id) => `<a class="card" href="${href}" data-card="${id}"><div class="n">${n}</div><div class="l">${esc(l)}</div></a>`;
  return title('Overview') + '<div class="cards">' +
    card(`${ready}/${nodes.items.size}`, 'nodes Ready', '#/nodes', 'nodes') +
    card(`${active}/${cqs.items.size}`, 'ClusterQueues active', '#/clusterqueues', 'clusterqueues') +
    card(lqs.items.size, 'LocalQueues', '#/localqueues', 'localqueues') +
    card(phases.pending, 'workloads pending', '#/workloads/pending', 'pending') +
    card(phases.admitted + phases.reserving, 'workloads admitted', '#/workloads/admitted', 'admitted') +
    card(phases.finished, 'workloads finished', '#/workloads/finished', 'finished') + '</div>' +
    '<h2>ClusterQueues</h2>' + LEGEND + (cqs.list().sort(byName).map(cqCard).join('') || '<p class="muted">No ClusterQueues yet.</p>');
}

const ROUTES = {
  '': { nav: 'overview', view: viewOverview },
  clusterqueues: { nav: 'clusterqueues', view: (a) => (a.length ? viewClusterQueue(a) : viewClusterQueues()) },
  localqueues: { nav: 'localqueues', view: viewLocalQueues },
  workloads: { nav: 'workloads', view: viewWorkloads },
  jobs: { nav: 'jobs', view: viewJobs },
  jobsets: { nav: 'jobs', view: (a) => (a.length >= 2 ? viewJobSet(a) : viewJobs([])) },
  pods: { nav: 'jobs', view: (a, q) => (a.length >= 2 ? viewPod(a, q) : viewJobs([])) },
  nodes: { nav: 'nodes', view: viewNodes },
};

// ---------- start ----------
$('#logout').dataset.action = 'logout';
whoAmI().then(() => changed());
changed();
