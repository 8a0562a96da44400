import { createHash } from 'node:crypto';
import { KEYED_LIST_SCRIPT, PAGE_CODE_SCRIPT, UNSHOWN_CHARACTERS } from '@aalis/core';

/**
 * The pod's panel for the console: one self-contained page (no external resources) on the
 * `/api/pod/…` routes. Task list with live progress (polled), the full log of a task, its files,
 * the return and export dialogs, the export log with undo, remembered choices, clean-up.
 * Everything the tasks produced is shown with textContent, never as HTML.
 */
export const PANEL_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Isolation Pod</title>
<style>
  :root { font: 14px/1.4 system-ui, sans-serif; color: #1d232a; background: #f6f7f9; }
  body { margin: 0; }
  [hidden] { display: none !important; }
  header { background: #24303c; color: #fff; padding: 10px 16px; display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
  header h1 { font-size: 17px; margin: 0; }
  main { display: grid; grid-template-columns: minmax(320px, 1fr) 2fr; gap: 12px; padding: 12px; }
  section { background: #fff; border: 1px solid #d9dde3; border-radius: 6px; padding: 10px; min-width: 0; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  table { width: 100%; border-collapse: collapse; }
  td, th { text-align: left; padding: 4px 6px; border-bottom: 1px solid #eceff3; vertical-align: top; }
  tr.task { cursor: pointer; } tr.task:hover, tr.task.selected { background: #eef4ff; }
  .state { font-weight: 600; } .succeeded { color: #16794a; } .failed, .crashed, .timed-out { color: #b42318; } .running, .queued { color: #9a6700; }
  pre { background: #111820; color: #dfe6ee; padding: 8px; border-radius: 4px; max-height: 420px; overflow: auto; white-space: pre-wrap; word-break: break-word; margin: 0; }
  textarea, input[type=text] { width: 100%; box-sizing: border-box; font: inherit; padding: 4px; }
  button { font: inherit; padding: 3px 10px; cursor: pointer; }
  .row { display: flex; gap: 8px; align-items: center; margin: 6px 0; flex-wrap: wrap; }
  .warn { background: #fff4e5; border: 1px solid #f5c07a; padding: 6px 8px; border-radius: 4px; }
  .error { color: #b42318; } .muted { color: #667085; }
  dialog { border: 1px solid #98a2b3; border-radius: 8px; min-width: 420px; max-width: 720px; }
  .clash { color: #b42318; font-weight: 600; }
</style>
</head>
<body>
<header><h1>Isolation Pod</h1><span id="root-line" class="muted"></span></header>
<main>
  <div>
    <section>
      <h2>New task</h2>
      <div id="no-root" class="warn" hidden>No sandbox root is set, so tasks are refused. Set one outside the workspace:
        <div class="row"><input type="text" id="root-input" placeholder="/home/me/aalis-pod"><button id="root-set">Set root</button></div>
      </div>
      <textarea id="task-input" rows="3" placeholder="Describe the task"></textarea>
      <div class="row"><input type="text" id="subdir-input" placeholder="sandbox subdirectory (optional)" style="flex:1"><button id="run">Run</button></div>
      <div id="start-error" class="error"></div>
    </section>
    <section style="margin-top:12px">
      <div class="row" style="justify-content:space-between"><h2>Tasks</h2><button id="clean-all">Clean up all</button></div>
      <table><thead><tr><th>Task</th><th>State</th><th>Progress</th></tr></thead><tbody id="tasks"></tbody></table>
    </section>
  </div>
  <div>
    <section id="detail" hidden>
      <div class="row" style="justify-content:space-between">
        <h2 id="detail-title"></h2>
        <div class="row">
          <button id="open-return">Return to conversation…</button>
          <button id="open-export">Export to workspace…</button>
          <button id="cancel-task">Cancel</button>
          <button id="clean-task">Clean up</button>
        </div>
      </div>
      <div>State: <span id="detail-state" class="state"></span> <span id="detail-dir" class="muted"></span></div>
      <div id="detail-conclusion" style="white-space:pre-wrap;margin:6px 0"></div>
      <div id="detail-error" class="error"></div>
      <h2 style="margin-top:10px">Files</h2>
      <table><tbody id="files"></tbody></table>
      <h2 style="margin-top:10px">Log</h2>
      <pre id="log"></pre>
    </section>
    <section style="margin-top:12px">
      <h2>Exports</h2>
      <table><tbody id="exports"></tbody></table>
      <div id="grants-box" hidden><h2 style="margin-top:10px">Remembered export choices</h2><table><tbody id="grants"></tbody></table></div>
      <div id="action-message" class="muted"></div>
    </section>
  </div>
</main>

<dialog id="return-dialog">
  <h2>Return to the main conversation</h2>
  <p class="muted">Exactly one short message is added to the main conversation. Nothing is exported.</p>
  <div class="row"><label>Return <select id="return-kind"></select></label>
    <label id="return-file-label" hidden>file <select id="return-file"></select></label></div>
  <div id="return-error" class="error"></div>
  <div class="row"><button id="return-confirm">Return</button><button id="return-close">Close</button></div>
</dialog>

<dialog id="export-dialog">
  <h2>Export to the workspace</h2>
  <p class="muted">Nothing is written until you confirm this one export. Nothing is returned to the conversation.</p>
  <div id="export-files"></div>
  <div class="row"><label style="flex:1">Target folder <input type="text" id="export-to" placeholder="a folder in the workspace"></label></div>
  <div class="row">
    <label>Mode <select id="export-mode"><option value="copy">copy</option><option value="move">move</option></select></label>
    <label><input type="checkbox" id="export-outside"> the target is outside the workspace, I mean it</label>
  </div>
  <div class="row"><button id="export-plan">Show plan</button><button id="export-close">Close</button></div>
  <div id="export-plan-box" hidden>
    <table><tbody id="export-items"></tbody></table>
    <div class="row" id="export-clash-row" hidden><label>Name clash: <select id="export-clash"><option value="">choose…</option><option>overwrite</option><option>skip</option><option>rename</option></select></label></div>
    <div class="row" id="export-remember-row" hidden><label><input type="checkbox" id="export-remember"> remember this choice for this folder (revocable)</label></div>
    <div class="row"><button id="export-confirm">Confirm export</button></div>
  </div>
  <div id="export-error" class="error"></div>
</dialog>

<script>
(() => {
  const $ = (id) => document.getElementById(id);
  let selected = null, lastSeq = 0, settings = null, plan = null, files = [];
  // The daemon's console opens this page as /pod#code=<id>.<key>: a one-time code. Its claim
  // (POST /api/console/claim, the id alone) answers once with a capability that opens only the
  // pod's API, sealed under the key, which never leaves this page (core's page-code.ts, the cli's
  // daemon/console-codes.ts): the address a browser keeps in its history is spent, where it held
  // the capability itself for hours. The capability is sent back as a header (never a cookie) and
  // kept in this tab's storage. '#cap=<capability>' is still taken.
  let auth = {};
  ${PAGE_CODE_SCRIPT}
  async function takeCap() {
    const code = pageCode(location.hash);
    const given = /(?:^#|&)cap=([^&]+)/.exec(location.hash);
    if (location.hash) history.replaceState(null, '', location.pathname);
    if (given) {
      let cap;
      try { cap = decodeURIComponent(given[1]); } catch (e) { throw new Error('the capability in this address is not readable (a broken %-escape). Open the Isolation Pod again from the console.'); }
      sessionStorage.setItem('aalis-pod-cap', cap);
    }
    if (code) {
      const claimed = await claimPageCode(code, 'pod', 'open the Isolation Pod again from the console');
      // only a pod capability is taken here, never anything that opens more
      if (!/^pod_[A-Za-z0-9_-]+$/.test(claimed.secret)) throw new Error('the answer to this address is not a pod capability. Open the Isolation Pod again from the console.');
      sessionStorage.setItem('aalis-pod-cap', claimed.secret);
    }
    return sessionStorage.getItem('aalis-pod-cap');
  }
  // a new address pasted into this tab is a navigation within the page, which runs nothing: load again to take it
  window.addEventListener('hashchange', () => { if (/(?:^#|&)(?:code|cap)=/.test(location.hash)) location.reload(); });
  const api = async (method, path, body) => {
    const res = await fetch('/api/pod/' + path, method === 'GET' ? { headers: auth } : { method, headers: Object.assign({ 'content-type': 'application/json' }, auth), body: JSON.stringify(body || {}) });
    if (res.status === 401) throw new Error('The pod refused this page: open the Isolation Pod again from the console (its pass expires).');
    const data = await res.json();
    if (!res.ok) throw new Error(data.error ? data.error.message : 'HTTP ' + res.status);
    return data;
  };
  // What tasks made, shown as written: a bidirectional override (U+202E) would lay out a name in
  // another order ('exe.txt' read as 'txt.exe'), other control characters are invisible; each is
  // shown as its escape. Every text the panel shows from the pod goes through here.
  const UNSHOWN = /${UNSHOWN_CHARACTERS}/g;
  const shown = (text) => String(text).replace(UNSHOWN, (c) => '\\\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = shown(text); if (cls) e.className = cls; return e; };
  ${KEYED_LIST_SCRIPT}
  const say = (text) => { $('action-message').textContent = shown(text); };

  async function loadSettings() {
    settings = await api('GET', 'settings');
    $('root-line').textContent = shown(settings.sandboxRoot ? 'sandbox root: ' + settings.sandboxRoot : 'no sandbox root');
    $('no-root').hidden = !!settings.sandboxRoot;
    $('open-export').hidden = !settings.exportEnabled;
    const kind = $('return-kind'); kind.textContent = '';
    for (const k of settings.returnKinds) { const o = el('option', k); o.value = k; if (k === settings.defaultReturn) o.selected = true; kind.appendChild(o); }
  }

  async function refreshTasks() {
    const tasks = await api('GET', 'tasks');
    // polled every second: a row redrawn every tick lost a click whose press and release fell on either side
    keyed($('tasks'), tasks.map((t) => ({ t, selected: t.id === selected })), ({ t }) => {
      const tr = el('tr', undefined, 'task' + (t.id === selected ? ' selected' : ''));
      tr.dataset.id = t.id;
      const first = el('td'); first.appendChild(el('div', t.task.length > 80 ? t.task.slice(0, 80) + '…' : t.task)); first.appendChild(el('div', t.id + (t.subdir ? ' · ' + t.subdir : '') + (t.cleanedAt ? ' · cleaned' : ''), 'muted'));
      tr.appendChild(first); tr.appendChild(el('td', t.state, 'state ' + t.state)); tr.appendChild(el('td', t.progress + (t.steps ? ' (step ' + t.steps + ')' : '')));
      tr.onclick = () => select(t.id);
      return tr;
    }, () => document.createDocumentFragment());
    if (selected) { const t = tasks.find((x) => x.id === selected); if (t) showTask(t); }
  }

  function showTask(t) {
    $('detail').hidden = false;
    $('detail-title').textContent = shown(t.id);
    $('detail-state').textContent = shown(t.state); $('detail-state').className = 'state ' + t.state;
    $('detail-dir').textContent = shown(t.dirs.work);
    $('detail-conclusion').textContent = shown(t.conclusion || '');
    $('detail-error').textContent = shown(t.error || '');
    const final = !['queued', 'running'].includes(t.state);
    $('cancel-task').hidden = final; $('clean-task').hidden = !final || !!t.cleanedAt; $('open-return').hidden = !final;
  }

  function logLine(e) {
    const time = new Date(e.at).toLocaleTimeString();
    switch (e.kind) {
      case 'started': return time + ' started in ' + e.dir + ' with tools ' + e.tools.join(', ');
      case 'context': return time + (e.enabled ? ' read ' + e.messages + ' messages of the main conversation (read-only)' : ' context reading is off');
      case 'model': return time + ' model: ' + (e.content || '') + (e.toolCalls.length ? ' → ' + e.toolCalls.join(', ') : '');
      case 'tool-call': return time + ' call ' + e.tool + ' ' + JSON.stringify(e.params);
      case 'tool-result': {
        let s = time + ' ' + e.tool + (e.ok ? ' ok' : ' failed') + (e.error ? ': ' + e.error : '');
        if (e.run) s += '\\n  exit code ' + e.run.exitCode + (e.run.signal ? ' signal ' + e.run.signal : '') + (e.run.timedOut ? ' (timed out)' : '') + (e.run.stdout ? '\\n  stdout: ' + e.run.stdout : '') + (e.run.stderr ? '\\n  stderr: ' + e.run.stderr : '');
        else if (e.ok && e.value !== undefined) s += ' ' + JSON.stringify(e.value).slice(0, 400);
        return s;
      }
      case 'refused': return time + ' REFUSED ' + e.tool + ' (' + e.rule + '): ' + e.message;
      case 'finished': return time + ' finished: ' + e.state + ' — ' + e.message;
      default: return time + ' ' + JSON.stringify(e);
    }
  }

  async function refreshDetail() {
    if (!selected) return;
    const entries = await api('GET', 'tasks/' + encodeURIComponent(selected) + '/logs?after=' + lastSeq);
    for (const e of entries) { $('log').appendChild(el('div', logLine(e), 'entry ' + e.kind)); lastSeq = e.seq; }
    files = await api('GET', 'tasks/' + encodeURIComponent(selected) + '/files');
    const body = $('files'); body.textContent = '';
    if (files.length === 0) body.appendChild(el('tr')).appendChild(el('td', 'no files', 'muted'));
    // A path that is not UTF-8 is shown by its bytes and marked: its text form names no file.
    for (const f of files) { const tr = el('tr'); tr.appendChild(el('td', (f.notUtf8 ? f.notUtf8 + ' (name not UTF-8)' : f.path) + (f.unlisted ? ' (contents not listed: ' + f.unlisted + ')' : ''))); tr.appendChild(el('td', f.kind === 'file' ? f.size + ' B' : f.kind, 'muted')); body.appendChild(tr); }
  }

  async function refreshExports() {
    const list = await api('GET', 'exports');
    const body = $('exports'); body.textContent = '';
    if (list.length === 0) body.appendChild(el('tr')).appendChild(el('td', 'no exports yet', 'muted'));
    for (const x of list.slice().reverse()) {
      const tr = el('tr');
      tr.appendChild(el('td', new Date(x.at).toLocaleString()));
      tr.appendChild(el('td', x.id + ' · ' + x.mode + ' ' + x.items.length + ' file(s) to ' + x.to + (x.via === 'remembered' ? ' (remembered choice)' : '')));
      const td = el('td');
      if (x.undoneAt) td.appendChild(el('span', 'undone', 'muted'));
      else { const b = el('button', 'Undo'); b.className = 'undo'; b.onclick = async () => { try { await api('POST', 'exports/' + encodeURIComponent(x.id) + '/undo'); say('Export ' + x.id + ' undone.'); refreshExports(); refreshDetail(); } catch (e) { say(e.message); } }; td.appendChild(b); }
      tr.appendChild(td); body.appendChild(tr);
    }
    const grants = await api('GET', 'grants');
    $('grants-box').hidden = grants.length === 0;
    const g = $('grants'); g.textContent = '';
    for (const x of grants) { const tr = el('tr'); tr.appendChild(el('td', x.to)); const td = el('td'); const b = el('button', 'Revoke'); b.onclick = async () => { await api('POST', 'grants/' + encodeURIComponent(x.id) + '/revoke'); refreshExports(); }; td.appendChild(b); tr.appendChild(td); g.appendChild(tr); }
  }

  function select(id) { selected = id; lastSeq = 0; $('log').textContent = ''; refreshTasks().then(refreshDetail); }

  $('run').onclick = async () => {
    $('start-error').textContent = '';
    try {
      const body = { task: $('task-input').value };
      if ($('subdir-input').value.trim()) body.subdir = $('subdir-input').value.trim();
      const t = await api('POST', 'tasks', body);
      $('task-input').value = ''; select(t.id);
    } catch (e) { $('start-error').textContent = shown(e.message); }
  };
  $('root-set').onclick = async () => { $('start-error').textContent = ''; try { await api('POST', 'settings/root', { path: $('root-input').value }); await loadSettings(); } catch (e) { $('start-error').textContent = shown(e.message); } };
  $('cancel-task').onclick = async () => { await api('POST', 'tasks/' + encodeURIComponent(selected) + '/cancel'); refreshTasks(); };
  $('clean-task').onclick = async () => { if (!confirm('Remove the directory of task ' + selected + '?')) return; try { await api('POST', 'clean', { id: selected }); say('Cleaned ' + selected + '.'); refreshTasks(); refreshDetail(); } catch (e) { say(e.message); } };
  $('clean-all').onclick = async () => { if (!confirm('Remove the directories of every ended task?')) return; const r = await api('POST', 'clean', { all: true }); say('Cleaned ' + r.cleaned.length + ' task(s).'); refreshTasks(); refreshDetail(); };

  $('open-return').onclick = () => {
    $('return-error').textContent = '';
    const sel = $('return-file'); sel.textContent = '';
    for (const f of files.filter((f) => f.kind === 'file' && !f.notUtf8)) { const o = el('option', f.path); o.value = f.path; sel.appendChild(o); }
    $('return-file-label').hidden = $('return-kind').value !== 'file';
    $('return-dialog').showModal();
  };
  $('return-kind').onchange = () => { $('return-file-label').hidden = $('return-kind').value !== 'file'; };
  $('return-close').onclick = () => $('return-dialog').close();
  $('return-confirm').onclick = async () => {
    try {
      const body = { as: $('return-kind').value };
      if (body.as === 'file') body.file = $('return-file').value;
      const r = await api('POST', 'tasks/' + encodeURIComponent(selected) + '/return', body);
      $('return-dialog').close(); say('Returned one message to the conversation: ' + r.message);
    } catch (e) { $('return-error').textContent = shown(e.message); }
  };

  $('open-export').onclick = () => {
    plan = null; $('export-error').textContent = ''; $('export-plan-box').hidden = true;
    const box = $('export-files'); box.textContent = '';
    for (const f of files) {
      if (f.path.includes('/') && files.some((d) => d.kind === 'dir' && f.path.startsWith(d.path + '/'))) continue;
      const label = el('label'); label.style.display = 'block';
      const cb = el('input'); cb.type = 'checkbox'; cb.value = f.path; cb.className = 'export-file';
      if (f.notUtf8) { cb.disabled = true; cb.className = ''; } // cannot be named for an export: rename it inside the task first
      label.appendChild(cb); label.appendChild(document.createTextNode(' ' + shown(f.notUtf8 ? f.notUtf8 + ' (name not UTF-8, cannot be exported)' : f.path) + (f.kind === 'dir' ? '/' : ''))); box.appendChild(label);
    }
    $('export-dialog').showModal();
  };
  $('export-close').onclick = () => { if (plan) api('POST', 'exports/cancel', { token: plan.token }).catch(() => {}); plan = null; $('export-dialog').close(); };
  $('export-plan').onclick = async () => {
    $('export-error').textContent = '';
    const chosen = [...document.querySelectorAll('.export-file:checked')].map((c) => c.value);
    try {
      const r = await api('POST', 'tasks/' + encodeURIComponent(selected) + '/export', { files: chosen, to: $('export-to').value, mode: $('export-mode').value, outsideWorkspace: $('export-outside').checked });
      if (r.state === 'done') { $('export-dialog').close(); say('Exported under your remembered choice: ' + r.record.id); refreshExports(); return; }
      plan = r;
      const body = $('export-items'); body.textContent = '';
      for (const i of r.plan.items) { const tr = el('tr'); tr.appendChild(el('td', i.relative)); tr.appendChild(el('td', '→ ' + i.target)); tr.appendChild(el('td', i.clash ? 'exists' : 'new', i.clash ? 'clash' : 'muted')); body.appendChild(tr); }
      $('export-clash-row').hidden = r.plan.clashes === 0;
      $('export-remember-row').hidden = !r.rememberAllowed; $('export-remember').checked = false;
      $('export-plan-box').hidden = false;
    } catch (e) { $('export-error').textContent = shown(e.message); }
  };
  $('export-confirm').onclick = async () => {
    if (!plan) return;
    const body = { token: plan.token };
    if ($('export-clash').value) body.onClash = $('export-clash').value;
    if (!$('export-remember-row').hidden && $('export-remember').checked) body.remember = true;
    try {
      const r = await api('POST', 'exports/confirm', body);
      plan = null; $('export-dialog').close(); say('Exported ' + r.items.length + ' file(s) to ' + r.to + ' (' + r.id + ').'); refreshExports(); refreshDetail();
    } catch (e) { $('export-error').textContent = shown(e.message); }
  };

  const tick = () => Promise.all([refreshTasks(), refreshDetail()]).catch(() => {}).finally(() => setTimeout(tick, 1000));
  // a code that did not open leaves the capability this tab had (found by a review: the panel
  // stopped working); what went wrong, there or at the first request, is said on the page
  takeCap()
    .catch((e) => { say('This address did not open the pod: ' + e.message); return sessionStorage.getItem('aalis-pod-cap'); })
    .then((cap) => { if (cap) auth = { authorization: 'Bearer ' + cap }; })
    .then(() => loadSettings())
    .then(() => { tick(); refreshExports(); }, (e) => { if (!$('action-message').textContent) say(e.message); });
})();
</script>
</body>
</html>
`;

const panelScript = PANEL_HTML.slice(PANEL_HTML.indexOf('<script>') + '<script>'.length, PANEL_HTML.indexOf('</script>'));

/**
 * The panel's Content-Security-Policy: its one script by its hash, never `'unsafe-inline'`, so
 * markup that got into the page (it shows what tasks produced) could not run a script of its own.
 * Style stays inline-allowed: the page's layout uses style attributes, and a style runs nothing.
 */
export const PANEL_CSP = `default-src 'none'; script-src 'sha256-${createHash('sha256').update(panelScript, 'utf8').digest('base64')}'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
