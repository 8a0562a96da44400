import { KEYED_LIST_SCRIPT, PAGE_CODE_SCRIPT, UNSHOWN_CHARACTERS } from '@aalis/core';

/**
 * The console's script (inline in the page; `CHOICES` is defined before it). Plain ES2020, no
 * template literals, so it sits in a TypeScript string as it is.
 */
export const CONSOLE_SCRIPT = String.raw`
'use strict';
const RULES = {
  tier: "the conversation's access tier does not cover it",
  boundary: "it lies outside the conversation's reach, and the boundary policy is 'ask'",
  landing: 'it writes a landing file (something that runs later, like a git hook), which is asked every time',
  'high-risk': 'the tool is high-risk: it is asked before it runs',
  plan: 'a plan is waiting to be approved',
};
const $ = (id) => document.getElementById(id);

// The address opens the console with a one-time code, '#code=<id>.<key>' (daemon/console-codes.ts):
// the id goes to POST /api/console/claim, which answers once with the daemon's token sealed under
// the key; the key never leaves this page, so whatever else answers at this address learns only a
// spent id. The token is kept in this tab's session storage only once the server has proved it
// knows it (a relay at another address would have this page's origin keep it), and stays there (a
// reload keeps it; another tab needs a new address: 'aalis console'). '#token=' is still taken,
// for an owner who builds the address.
${PAGE_CODE_SCRIPT}
let CLAIM_FAILED = '';
let NOT_KEPT = false;
async function takeToken() {
  const code = pageCode(location.hash);
  const given = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  // out of the address bar (and this tab's history entry) before anything else
  if (location.hash) history.replaceState(null, '', location.pathname);
  const kept = sessionStorage.getItem('aalis-token');
  if (!code && !given) return kept;
  // A token from the address, claimed or given, is kept only once the server proved it knows it:
  // a page of another origin that had this tab's handle set '#token=<its own>' in its address,
  // and the tab kept it in place of the real one (found by an attack).
  let keep = true;
  try {
    if (code) {
      const claimed = await claimPageCode(code, 'console', "run 'aalis console' for a new address");
      TOKEN = claimed.secret;
      keep = claimed.keep;
    } else {
      try {
        TOKEN = decodeURIComponent(given[1]);
      } catch (e) {
        throw new Error('the token in this address is not readable (a broken %-escape).');
      }
      // the page cannot tell a token fixed by AALIS_TOKEN from a daemon's own: one written in an
      // address is held while the tab is open, never kept
      keep = false;
    }
    await proveDaemon();
  } catch (e) {
    CLAIM_FAILED = e.message;
    return kept;
  }
  if (keep) sessionStorage.setItem('aalis-token', TOKEN);
  else {
    // AALIS_TOKEN fixed it (or the address held it): it may outlive the daemon, and whatever
    // serves this port next could read this tab's storage
    sessionStorage.removeItem('aalis-token');
    NOT_KEPT = code ? 'fixed' : 'given';
  }
  return TOKEN;
}
// A new address pasted into this tab is a navigation within the page, which runs nothing: the
// page is loaded again to take it (else its code stayed live in the address bar, unused).
window.addEventListener('hashchange', () => {
  if (/(?:^#|&)(?:code|token)=/.test(location.hash)) location.reload();
});
let TOKEN = null;
// Nothing else ever gets the token: no cookie (cookies are not tied to a port, so every server on
// 127.0.0.1 would receive it). The pod's panel gets a capability that opens only the pod (openPod).

// Text from the daemon (a path a command made, the model's reply) shown as it is, not as the
// browser would lay it out: a bidirectional override (U+202E) or isolate shows the characters
// after it in another order (an ask for 'exe.txt' could read 'txt.exe'), and other control
// characters are invisible. Each is shown as its escape. Every text node goes through here.
const UNSHOWN = /${UNSHOWN_CHARACTERS}/g;
function shown(text) {
  return String(text).replace(UNSHOWN, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : tag === 'code' ? exact(c) : shown(c));
  return el;
}

// A code element holds a value a person judges (a path, a command, its input): a newline in it
// collapsed to a space in HTML, so 'echo "…"  # not run: touch x' hid a second line that ran on
// approval (found by an attack). Each newline is shown as ⏎ and breaks the line (the style keeps
// it: white-space pre-wrap), each tab as ⇥; the style lays the value out left to right in its
// stored order (bidi-override), so right-to-left letters cannot reorder a path's parts.
function exact(text) {
  return shown(text).replace(/\n/g, '\u23ce\n').replace(/\t/g, '\u21e5\t');
}

${KEYED_LIST_SCRIPT}
// What the address did (a code that did not open, a token this tab does not keep) stays shown: a
// refresh that went well cleared it at once, before anyone read it (found by a review).
let STANDING = '';
function notice(text) {
  const el = $('notice');
  const said = text || STANDING;
  el.textContent = shown(said);
  el.hidden = !said;
}

// The token goes only to a server that proves it knows it (GET /api/proof, daemon/token.ts): a
// stopped daemon's port may be taken by another local user's server, and this tab's refreshes
// sent it the token (found by an attack). Proved before every request that carries the token.
const PROOF_TEXT = new TextEncoder();
function hex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
async function proveDaemon() {
  const nonce = hex(crypto.getRandomValues(new Uint8Array(32)));
  const res = await fetch('/api/proof?nonce=' + nonce);
  const data = await res.json().catch(() => ({}));
  // The proof names the daemon's end of the connection; a page cannot see the address it reached,
  // so it checks the port it was loaded from, and the address where it was loaded by one: a server
  // relaying the question to a daemon on another port is found out.
  const port = Number(location.port || (location.protocol === 'https:' ? 443 : 80));
  let host = location.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  // a browser writes an IPv4 address mapped into IPv6 in hex (::ffff:7f00:1); the proof in dots
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const hi = parseInt(mapped[1], 16);
    const lo = parseInt(mapped[2], 16);
    host = [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  const byAddress = /^[0-9.]+$/.test(host) || host.includes(':');
  const key = await crypto.subtle.importKey('raw', PROOF_TEXT.encode(TOKEN), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = hex(new Uint8Array(await crypto.subtle.sign('HMAC', key, PROOF_TEXT.encode('aalis-daemon-proof\u0000' + nonce + '\u0000' + data.address + '\u0000' + port))));
  if (data.proof !== mac || data.port !== port || (byAddress && data.address !== host)) {
    const err = new Error('the server at this address could not prove it knows the token this tab holds, so the token was not sent: the daemon may have restarted (its token is new at each start), or stopped and something else listens on its port. Run \'aalis console\' and open the address it prints.');
    err.status = 'not-the-daemon';
    throw err;
  }
}

async function api(method, path, body) {
  await proveDaemon();
  const res = await fetch(path, {
    method,
    headers: Object.assign({ authorization: 'Bearer ' + TOKEN }, body ? { 'content-type': 'application/json' } : {}),
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await res.json().catch(() => ({ error: { code: 'bad-response', message: 'the daemon answered ' + res.status + ' without JSON' } }));
  if (!res.ok) {
    const e = data.error || {};
    const err = new Error((e.message || 'HTTP ' + res.status) + (e.fix ? ' Fix: ' + e.fix + '.' : ''));
    err.code = e.code;
    err.status = res.status;
    throw err;
  }
  return data;
}

function what(subject) {
  switch (subject.kind) {
    case 'write-path': return ['write ', h('code', {}, subject.path), ...(subject.toMake ? [', to make ', h('code', {}, subject.toMake), ' there'] : [])];
    case 'host-exec': return ['run on the host, outside the sandbox: ', h('code', {}, subject.command), ...(subject.cwd ? [' in ', h('code', {}, subject.cwd)] : []), ...(subject.stdin ? [', with its input ', h('code', {}, subject.stdin)] : [])];
    case 'network': return ['use the network (' + subject.via + ')'];
    case 'workflow': return ['run the workflow ', h('code', {}, subject.workflow)];
    case 'tool': return ['run the tool ', h('code', {}, subject.tool), subject.summary ? [' ', h('code', {}, subject.summary)] : ''];
    case 'plan': return ['approve the plan: ' + subject.summary];
    default: return [JSON.stringify(subject)];
  }
}

function when(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  return d.toLocaleTimeString();
}

function left(expiresAt) {
  if (!expiresAt) return '';
  const s = Math.max(0, Math.round((expiresAt - Date.now()) / 1000));
  return s >= 120 ? Math.round(s / 60) + ' min left' : s + ' s left';
}

async function reply(card, p, decision) {
  const msg = card.querySelector('.msg');
  for (const b of card.querySelectorAll('button')) b.disabled = true;
  const reason = decision === 'reject' ? (card.querySelector('input').value.trim() || undefined) : undefined;
  try {
    const r = await api('POST', '/api/approvals/reply', { code: p.code, decision, reason });
    msg.className = 'msg ok';
    msg.textContent = shown(r.message);
    setTimeout(refreshAll, 600);
  } catch (e) {
    msg.className = 'msg bad';
    msg.textContent = shown(e.message);
    for (const b of card.querySelectorAll('button')) b.disabled = false;
  }
}

function pendingCard(p) {
  const card = h('article', { class: 'card pending', 'data-code': p.code, 'data-id': p.id },
    h('h3', {}, what(p.subject)),
    h('div', { class: 'row' }, h('span', { class: 'label' }, 'why'), p.summary),
    h('div', { class: 'row' }, h('span', { class: 'label' }, 'for'), p.raisedBy ? h('code', { title: 'whom the asking call acts for' }, p.raisedBy.platform + ':' + p.raisedBy.userId) : 'nobody vouched for (no authenticated speaker)'),
    h('div', { class: 'row' }, h('span', { class: 'label' }, 'rule'), h('code', {}, p.subject.rule), RULES[p.subject.rule] || ''),
    (p.running || []).length ? h('div', { class: 'row' }, h('span', { class: 'label' }, 'running'), (p.running || []).map((c) => h('code', { title: 'a call running in this conversation' }, c.summary))) : '',
    h('div', { class: 'row muted' }, 'conversation ', h('code', {}, p.session), ' · code ', h('code', { class: 'code' }, p.code), ' · asked ' + when(p.createdAt), p.expiresAt ? h('span', { class: 'left', 'data-expires': p.expiresAt }, ' · ' + left(p.expiresAt)) : '', p.approver === 'reviewer' ? ' · the AI reviewer is deciding; your answer wins' : ''),
  );
  const reason = h('input', { type: 'text', placeholder: 'reason (optional, for reject)', 'aria-label': 'reason' });
  card.append(h('div', { class: 'row' },
    h('button', { class: 'primary', onclick: () => reply(card, p, 'approve') }, 'Approve once'),
    p.rememberable ? h('button', { onclick: () => reply(card, p, 'approve-remember'), title: 'approve, and answer the same ask in this conversation by itself from now on' }, 'Remember for this conversation') : h('span', { class: 'muted' }, 'asked every time: cannot be remembered'),
    h('button', { class: 'danger', onclick: () => reply(card, p, 'reject') }, 'Reject'),
    reason,
  ), h('div', { class: 'msg', role: 'status' }));
  return card;
}

async function refreshInbox() {
  const { pending } = await api('GET', '/api/approvals/pending');
  $('inbox-count').textContent = String(pending.length);
  const box = $('inbox');
  // Do not replace a card whose reason is being typed.
  if (box.contains(document.activeElement) && document.activeElement.tagName === 'INPUT' && pending.some((p) => p.id === document.activeElement.closest('.card').dataset.id)) return;
  keyed(box, pending, pendingCard, () => h('p', { class: 'muted' }, 'Nothing is waiting for an answer.'));
  for (const el of box.querySelectorAll('.left')) el.textContent = ' · ' + left(Number(el.dataset.expires));
}

async function refreshGrants() {
  const { grants } = await api('GET', '/api/grants');
  const body = $('grants');
  keyed(body, grants, (g) => {
    const msg = h('span', { class: 'msg' });
    return h('tr', { 'data-grant': g.id },
      h('td', {}, h('code', {}, g.session)),
      h('td', {}, what(g.subject)),
      h('td', {}, h('code', {}, g.scope.rule)),
      h('td', {}, g.grantedBy.platform + ':' + g.grantedBy.userId),
      h('td', {}, new Date(g.grantedAt).toLocaleString()),
      h('td', {}, h('button', { class: 'danger', onclick: async () => {
        try { await api('POST', '/api/grants/revoke', { id: g.id }); refreshAll(); }
        catch (e) { msg.className = 'msg bad'; msg.textContent = shown(e.message); }
      } }, 'Revoke'), msg));
  }, () => h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No remembered grants.')));
}

// The last message of each conversation's card, kept across re-renders.
const sessionMessages = {};

function sessionCard(s) {
  const selects = {};
  const fields = [['tier', 'tier'], ['boundary', 'boundary'], ['approver', 'approver'], ['runMode', 'run mode']].map(([key, name]) => {
    const sel = h('select', { name: key, 'aria-label': name, 'data-current': s.settings[key] }, CHOICES[key].map((v) => h('option', { value: v, selected: s.settings[key] === v }, v)));
    selects[key] = sel;
    return h('label', {}, h('span', { class: 'label' }, name), sel);
  });
  const msg = h('div', { class: 'msg', role: 'status' });
  const say = (cls, text) => {
    sessionMessages[s.id] = { cls, text };
    msg.className = 'msg ' + cls;
    msg.textContent = shown(text);
  };
  if (sessionMessages[s.id]) say(sessionMessages[s.id].cls, sessionMessages[s.id].text);
  const apply = h('button', { class: 'primary', onclick: async () => {
    const change = {};
    for (const [key, sel] of Object.entries(selects)) if (sel.value !== s.settings[key]) change[key] = sel.value;
    if (!Object.keys(change).length) return say('', 'Nothing changed.');
    try {
      const r = await api('POST', '/api/sessions/' + encodeURIComponent(s.id) + '/settings', change);
      s.settings = r.settings;
      for (const [key, sel] of Object.entries(selects)) { sel.value = r.settings[key]; sel.dataset.current = r.settings[key]; }
      // the card no longer shows the record it was kept by: the next refresh draws it from the daemon's
      // (kept, it would show these settings even after they were changed back elsewhere; found by a review)
      delete card.dataset.key;
      say('ok', 'Applied: tier ' + r.settings.tier + ', boundary ' + r.settings.boundary + ', approver ' + r.settings.approver + ', run mode ' + r.settings.runMode + (r.settings.restore ? ' (plan keeps ' + r.settings.restore.tier + ' to restore)' : '') + '.');
    } catch (e) {
      for (const [key, sel] of Object.entries(selects)) sel.value = s.settings[key];
      say('bad', 'Refused' + (e.code ? ' (' + e.code + ')' : '') + ': ' + e.message);
    }
  } }, 'Apply');
  const card = h('article', { class: 'card session', 'data-session': s.id },
    h('h3', {}, s.id),
    h('div', { class: 'row muted' }, 'from ' + s.platform + ' · last used ' + new Date(s.lastSeen).toLocaleString() + ' · ' + s.pending + ' pending · ' + s.grants + ' grants'),
    h('div', { class: 'settings' }, fields, apply), msg);
  return card;
}

async function refreshSessions() {
  const { sessions, total } = await api('GET', '/api/sessions');
  const more = $('sessions-more');
  // the first page only: the daemon lists a page at a time, most recently used first
  more.hidden = !(total > sessions.length);
  more.textContent = 'The ' + sessions.length + ' most recently used of ' + total + ' conversations. Older ones: GET /api/sessions?before=<next> (see DAEMON.md).';
  const box = $('sessions');
  // Do not replace a card the person is editing (a changed choice not yet applied).
  const editing = [...box.querySelectorAll('article.session')].some((card) => [...card.querySelectorAll('select')].some((sel) => sel.value !== sel.dataset.current));
  if (editing || (box.contains(document.activeElement) && document.activeElement.tagName === 'SELECT')) return;
  keyed(box, sessions, sessionCard, () => h('p', { class: 'muted' }, 'No conversation has reached the daemon yet.'));
}

function auditResult(r) {
  if (r.event === 'resolved') return h('span', { class: 'outcome-' + r.outcome }, r.outcome + ' via ' + r.via + (r.remembered ? ' (remembered)' : '') + (r.reason ? ': ' + r.reason : ''));
  if (r.event === 'requested') return 'asked (code ' + r.code + ')';
  if (r.event === 'reply-refused') return h('span', { class: 'outcome-rejected' }, 'reply refused: ' + r.message);
  if (r.event === 'grant-revoked') return 'grant ' + r.grantId + ' revoked';
  return '';
}

function auditBy(r) {
  const who = r.answeredBy || r.by;
  if (!who) return r.turn ? 'asked by ' + r.turn.speaker.platform + ':' + r.turn.speaker.userId : '';
  return typeof who === 'string' ? who : who.platform + ':' + who.userId;
}

const AUDIT_ROWS = 200;
// Where the shown page of the audit log ended: on an event only the lines after it are asked for.
let auditAt = null;

function auditRow(r) {
  return h('tr', { 'data-event': r.event },
    h('td', {}, new Date(r.at).toLocaleString()),
    h('td', {}, r.event),
    h('td', {}, r.session ? h('code', {}, r.session) : ''),
    h('td', {}, r.subject ? what(r.subject) : r.scope ? r.scope.kind + ' ' + r.scope.target : ''),
    h('td', {}, r.rule || (r.scope && r.scope.rule) || ''),
    h('td', {}, auditResult(r)),
    h('td', {}, auditBy(r)));
}

async function refreshAudit() {
  const body = $('audit');
  const since = auditAt ? '&after=' + auditAt.end + '&file=' + encodeURIComponent(auditAt.file) : '';
  const page = await api('GET', '/api/audit?limit=' + AUDIT_ROWS + since);
  const whole = !auditAt || page.reset || page.records.length >= AUDIT_ROWS;
  auditAt = { end: page.end, file: page.file };
  if (whole) {
    if (!page.records.length) return body.replaceChildren(h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'The audit log is empty.')));
    return body.replaceChildren(...page.records.slice().reverse().map(auditRow));
  }
  if (!page.records.length) return;
  if (body.querySelector('td.empty')) body.replaceChildren();
  body.prepend(...page.records.slice().reverse().map(auditRow));
  while (body.children.length > AUDIT_ROWS) body.lastElementChild.remove();
}

async function refreshTools() {
  const t = await api('GET', '/api/tools/spec');
  $('tools-status').textContent = shown(t.tools.length + ' spec tool(s) in ' + t.dir + ' · containers: ' + (t.engine.available ? 'run' : 'REFUSED (' + t.engine.detail + ')'));
  $('tools-problems').replaceChildren(...t.problems.map((p) => h('li', { class: 'outcome-rejected' }, p.file + ': ' + p.field + ': ' + p.message)));
  const body = $('tools-audit');
  if (!t.audit.length) return body.replaceChildren(h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'The tool manager has changed nothing.')));
  body.replaceChildren(...t.audit.slice(-200).reverse().map((e) => h('tr', { 'data-result': e.result },
    h('td', {}, new Date(e.ts).toLocaleString()),
    h('td', {}, e.who),
    h('td', {}, e.action),
    h('td', {}, h('code', {}, e.tool)),
    h('td', {}, e.result),
    h('td', {}, e.detail || ''))));
}

async function openPod(event) {
  event.preventDefault();
  try {
    const pass = await api('POST', '/api/console/pod-capability');
    // a one-time code for the capability (daemon/console-codes.ts): the history keeps a spent address
    location.assign(pass.address);
  } catch (e) {
    notice('The Isolation Pod could not be opened: ' + e.message);
  }
}
$('pod-link').addEventListener('click', openPod);

async function refreshStatus() {
  const s = await api('GET', '/api/status');
  $('pod-link').hidden = !s.pod;
  $('status').textContent = shown('deployment ' + s.deployment + ' · sandbox ' + s.backend + (s.sandboxWorks ? ' (works)' : ' (NOT working: sandboxed commands will not run)') + ' · answering as ' + s.console.as.platform + ':' + s.console.as.userId
    + ((s.extensions || []).length ? ' · plugins: ' + s.extensions.map((e) => e.state === 'loaded' ? e.name : (e.name || e.specifier) + ' (FAILED: ' + e.cause + ')').join(', ') : ''));
}

// What each streamed event can change; the rest of the page is left alone.
const PARTS = { status: refreshStatus, inbox: refreshInbox, grants: refreshGrants, sessions: refreshSessions, audit: refreshAudit, tools: refreshTools };
const ALL = Object.keys(PARTS);
const AFFECTS = {
  'approval/requested': ['inbox', 'sessions', 'audit'],
  'approval/resolved': ['inbox', 'grants', 'sessions', 'audit'],
  'session/settings-changed': ['sessions'],
};
let refreshing = false;
const due = new Set();
async function refresh(parts) {
  for (const part of parts) due.add(part);
  if (refreshing) return;
  refreshing = true;
  try {
    while (due.size) {
      const now = [...due];
      due.clear();
      await Promise.all(now.map((part) => PARTS[part]()));
    }
    notice('');
  } catch (e) {
    notice(e.status === 401 ? "The token was refused (the daemon may have restarted since). Run 'aalis console' for a new address." : 'The daemon did not answer: ' + e.message);
  } finally {
    refreshing = false;
  }
}
const refreshAll = () => refresh(ALL);

// An SSE frame's event name and data, its lines split on \n only: a regex's ^, $ and . also break
// at U+2028 and U+2029, which JSON text may hold raw, and data cut there fails to parse.
function sseFields(frame) {
  const fields = {};
  for (const line of frame.split('\n')) {
    if (line.startsWith('event: ')) fields.name = line.slice(7);
    else if (line.startsWith('data: ')) fields.data = fields.data === undefined ? line.slice(6) : fields.data + '\n' + line.slice(6);
  }
  return fields;
}

async function listen() {
  const live = $('live');
  for (let delay = 1000; ; delay = Math.min(delay * 2, 15000)) {
    try {
      await proveDaemon();
      const res = await fetch('/api/events', { headers: { authorization: 'Bearer ' + TOKEN } });
      if (!res.ok || !res.body) throw new Error('HTTP ' + res.status);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const { name, data: raw } = sseFields(frame);
          if (name === 'ready') { live.textContent = 'live'; live.className = 'badge on'; delay = 1000; refreshAll(); loadChat(); }
          else if (name === 'stopping') notice('The daemon is stopping.');
          else if (name) {
            onChatEvent(name, raw ? JSON.parse(raw) : undefined);
            // The agent's events (a delta per piece of text) feed the chat only; the rest refresh what they can change.
            if (!AGENT_EVENT_NAMES.includes(name)) refresh(AFFECTS[name] || ALL);
            else if (name === 'turn/ended') refreshAll();
          }
        }
      }
    } catch (e) {
      // said, then the retry below
      if (e.status === 'not-the-daemon') notice(e.message);
    }
    live.textContent = 'offline';
    live.className = 'badge off';
    await new Promise((r) => setTimeout(r, delay));
  }
}

takeToken().then((token) => {
  TOKEN = token;
  if (CLAIM_FAILED) STANDING = 'This address did not open the console: ' + CLAIM_FAILED + (TOKEN ? ' (This tab keeps the token it had.)' : '');
  else if (NOT_KEPT === 'fixed') STANDING = "This daemon's token is fixed (AALIS_TOKEN), so this tab holds it only while it shows the console: a reload, or coming back from the Isolation Pod, needs a new address ('aalis console').";
  else if (NOT_KEPT === 'given') STANDING = 'This tab holds the token from its address only while it shows the console (a token written in an address is never kept): a reload needs the address again.';
  else if (!TOKEN) STANDING = "No token in this tab: run 'aalis console' for an address that opens the console (an address opens it once).";
  notice('');
  if (TOKEN) {
    refreshAll();
    listen();
    setInterval(refreshAll, 10000);
  }
});
`;
