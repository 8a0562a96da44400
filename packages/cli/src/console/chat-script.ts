/**
 * The console's chat pane (inline in the page after the console's script, whose `h`, `api` and
 * `$` it uses; `listen` hands it the agent's events). Plain ES2020, no template literals.
 */
export const CHAT_SCRIPT = `
const AGENT_EVENT_NAMES = ['turn/started', 'message/delta', 'message/created', 'tool/started', 'tool/ended', 'turn/ended'];
// ended: the turns whose turn/ended came; the event stream can bring it before the POST that
// started the turn answers (a turn that fails at once), and that answer must not say it runs.
const chat = { me: null, streaming: null, running: null, ended: new Set() };

function chatSession() { return $('chat-session').value.trim() || 'console'; }
function chatStatus(cls, text) { const el = $('chat-status'); el.className = 'msg ' + cls; el.textContent = shown(text); }
function short(text) { text = text === undefined ? '' : String(text); return text.length > 240 ? text.slice(0, 240) + '…' : text; }
// A live call id is '<turnId>:<the model's call id>'; the history keeps the model's id.
function callKey(callId) { const i = callId.indexOf(':'); return i >= 0 ? callId.slice(i + 1) : callId; }
function chatScroll() { const log = $('chat-log'); log.scrollTop = log.scrollHeight; }
function updateChatButtons() { $('chat-stop').disabled = !chat.running; }

function bubble(m) {
  const who = m.role === 'user' ? (m.from ? m.from.platform + ':' + m.from.userId : 'user') : m.role === 'assistant' ? 'agent' : 'note';
  return h('div', { class: 'bubble ' + m.role, 'data-role': m.role }, h('span', { class: 'label' }, who), h('div', { class: 'text' }, m.content));
}

function toolLine(key, tool, params) {
  const existing = $('chat-log').querySelector('[data-call="' + CSS.escape(key) + '"]');
  if (existing) return existing;
  const el = h('div', { class: 'tool running', 'data-call': key, 'data-tool': tool }, h('span', { class: 'label' }, 'tool'), ' ', h('code', {}, tool), ' ', h('code', { class: 'params' }, short(typeof params === 'string' ? params : JSON.stringify(params))), h('span', { class: 'result' }, ' running…'));
  $('chat-log').append(el);
  return el;
}

function toolResult(key, outcome) {
  const el = $('chat-log').querySelector('[data-call="' + CSS.escape(key) + '"]');
  if (!el) return;
  el.className = 'tool ' + (outcome.ok ? 'ok' : 'bad');
  el.querySelector('.result').textContent = shown(outcome.ok ? ' → ok ' + short(JSON.stringify(outcome.value)) : ' → ' + outcome.kind + ': ' + outcome.message);
}

function showMessage(m, live) {
  if (m.role === 'tool') {
    // Live, tool/ended already showed it; from the history, it completes its line.
    if (!live) { try { toolResult(m.toolCallId, JSON.parse(m.content)); } catch (e) { toolResult(m.toolCallId, { ok: false, kind: 'result', message: m.content }); } }
    return;
  }
  if (m.role !== 'assistant' || m.content) $('chat-log').append(bubble(m));
  if (!live) for (const c of m.toolCalls || []) { let p = c.arguments; try { p = JSON.parse(c.arguments); } catch (e) { /* shown as written */ } toolLine(c.id, c.name, p); }
}

async function loadChat() {
  const id = chatSession();
  chat.streaming = null;
  try {
    const r = await api('GET', '/api/sessions/' + encodeURIComponent(id) + '/messages');
    $('chat-log').replaceChildren();
    for (const m of r.messages) showMessage(m, false);
    chat.running = r.running ? r.running.turnId : null;
    if (!r.messages.length) $('chat-log').append(h('p', { class: 'muted' }, 'No messages yet: say something.'));
    const { pending } = await api('GET', '/api/approvals/pending?session=' + encodeURIComponent(id));
    for (const p of pending) $('chat-log').append(pendingCard(p));
  } catch (e) {
    chat.running = null;
    $('chat-log').replaceChildren(h('p', { class: 'muted' }, e.status === 404 ? 'No messages yet in ' + id + ': say something.' : 'The conversation could not be read: ' + e.message));
  }
  updateChatButtons();
  chatScroll();
}

async function sendChat(event) {
  event.preventDefault();
  const input = $('chat-input');
  const text = input.value.trim();
  if (!text) return;
  if (!chat.me) chat.me = (await api('GET', '/api/status')).console.as;
  const me = chat.me;
  const turn = { session: { id: chatSession() }, platform: me.platform, speaker: me, authorised: me, inbound: { id: 'console-' + Date.now() + '-' + Math.random().toString(36).slice(2) }, category: 'own' };
  try {
    const r = await api('POST', '/api/turns', { turn, message: text });
    input.value = '';
    if ($('chat-log').querySelector('p.muted')) $('chat-log').replaceChildren();
    if (!r.turnId || !chat.ended.has(r.turnId)) {
      chat.running = r.turnId || null;
      chatStatus('', r.turnId ? 'The agent is answering…' : 'Recorded.');
    }
  } catch (e) {
    chatStatus('bad', (e.code === 'turn-running' ? 'Not sent: ' : 'Refused: ') + e.message);
  }
  updateChatButtons();
}

async function stopChat() {
  try {
    const r = await api('POST', '/api/sessions/' + encodeURIComponent(chatSession()) + '/stop');
    chatStatus('', r.stopped ? 'Stopping the turn…' : 'Nothing was running.');
  } catch (e) {
    chatStatus('bad', e.message);
  }
}

function onChatEvent(name, data) {
  const id = chatSession();
  if (name === 'approval/requested') {
    if (data && (data.session.rootId || data.session.id) === id) { $('chat-log').append(pendingCard(Object.assign({}, data, { session: data.session.rootId || data.session.id, running: [] }))); chatScroll(); }
    return;
  }
  if (name === 'approval/resolved') {
    const card = data && $('chat-log').querySelector('article.pending[data-id="' + CSS.escape(data.id) + '"]');
    if (card) { for (const b of card.querySelectorAll('button')) b.disabled = true; card.classList.add('answered'); const msg = card.querySelector('.msg'); if (!msg.textContent) msg.textContent = shown(data.outcome.outcome + ' (' + data.via + ')'); }
    return;
  }
  if (!data || (data.session !== id && data.conversation !== id)) return;
  const log = $('chat-log');
  if (name === 'turn/started') { chat.running = data.turnId; chatStatus('', 'The agent is answering (' + data.runMode + ' mode)…'); }
  else if (name === 'message/delta') {
    if (!chat.streaming) { chat.streaming = bubble({ role: 'assistant', content: '' }); chat.streaming.classList.add('streaming'); log.append(chat.streaming); }
    chat.streaming.querySelector('.text').textContent += shown(data.text);
  } else if (name === 'message/created') {
    if (data.message.role === 'assistant' && chat.streaming) { chat.streaming.remove(); chat.streaming = null; }
    if (data.message.role === 'user' && log.querySelector('p.muted')) log.replaceChildren();
    showMessage(data.message, true);
  } else if (name === 'tool/started') toolLine(callKey(data.callId), data.tool, data.params);
  else if (name === 'tool/ended') toolResult(callKey(data.callId), data.outcome);
  else if (name === 'turn/ended') {
    chat.ended.add(data.turnId);
    chat.running = null;
    chat.streaming = null;
    if (data.state === 'failed') chatStatus('bad', 'The turn failed: ' + data.error.message + (data.error.fix ? ' Fix: ' + data.error.fix + '.' : ''));
    else chatStatus(data.state === 'answered' ? 'ok' : '', data.state === 'answered' ? 'Answered.' : 'Stopped.');
  }
  updateChatButtons();
  chatScroll();
}

$('chat-form').addEventListener('submit', sendChat);
$('chat-stop').addEventListener('click', stopChat);
$('chat-session').addEventListener('change', loadChat);
if (TOKEN) loadChat();
`;
