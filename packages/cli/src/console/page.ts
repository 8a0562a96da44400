import { createHash } from 'node:crypto';
import { ACCESS_TIERS, APPROVERS, BOUNDARY_POLICIES, RUN_MODES } from '@aalis/core';
import { CHAT_SCRIPT } from './chat-script.js';
import { CONSOLE_SCRIPT } from './script.js';
import { CONSOLE_STYLE } from './style.js';

const choices = JSON.stringify({ tier: ACCESS_TIERS, boundary: BOUNDARY_POLICIES, approver: APPROVERS, runMode: RUN_MODES });
const script = `const CHOICES = ${choices};
${CONSOLE_SCRIPT}
${CHAT_SCRIPT}`;
const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The console's Content-Security-Policy: its one script and its one style by their hashes, never
 * `'unsafe-inline'`, so markup that got into the page some day (the console shows text from
 * sandboxed commands, the model and other chat users) could not run a script of its own; nothing
 * is loaded from elsewhere, it connects only to the daemon, and no page may frame it.
 */
export const CONSOLE_CSP = `default-src 'none'; script-src ${hashOf(script)}; style-src ${hashOf(CONSOLE_STYLE)}; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/**
 * The web console: one self-contained page (inline style and script, nothing loaded from
 * elsewhere) that talks to the daemon's API with the token from its URL fragment.
 */
export const CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>aalis console</title>
<style>${CONSOLE_STYLE}</style>
</head>
<body>
<header>
  <h1>aalis</h1>
  <span id="status" class="muted">connecting…</span>
  <a id="pod-link" href="/pod" hidden>Isolation Pod</a>
  <span id="live" class="badge off" title="live event stream">offline</span>
</header>
<main>
  <p id="notice" class="notice" hidden></p>
  <section id="chat-section" aria-labelledby="chat-title">
    <h2 id="chat-title">Chat</h2>
    <p class="muted">Talk to the agent. Its reply streams here, with every tool call and its outcome; asks show inline and in the inbox.</p>
    <div class="row"><label><span class="label">conversation</span> <input id="chat-session" type="text" value="console" aria-label="conversation"></label></div>
    <div id="chat-log" class="chat-log" aria-live="polite"></div>
    <form id="chat-form" class="chat-form"><textarea id="chat-input" rows="2" aria-label="message" placeholder="Message the agent"></textarea><button class="primary" type="submit">Send</button><button id="chat-stop" type="button" class="danger" disabled>Stop</button></form>
    <div id="chat-status" class="msg" role="status"></div>
  </section>
  <section id="inbox-section" aria-labelledby="inbox-title">
    <h2 id="inbox-title">Approval inbox <span id="inbox-count" class="count">0</span></h2>
    <p class="muted">What a tool call wants, why it was asked, and the rule that asked. Approve once, remember it for the conversation, or reject.</p>
    <div id="inbox" class="cards"></div>
  </section>
  <section aria-labelledby="grants-title">
    <h2 id="grants-title">Remembered grants</h2>
    <table><thead><tr><th>conversation</th><th>what</th><th>rule</th><th>granted by</th><th>when</th><th></th></tr></thead><tbody id="grants"></tbody></table>
  </section>
  <section aria-labelledby="sessions-title">
    <h2 id="sessions-title">Conversations</h2>
    <p class="muted">Each conversation's four settings. The daemon applies the cross-axis rules (plan runs read-only; the tier cannot be raised while planning) and shows its refusal here.</p>
    <div id="sessions" class="cards"></div>
    <p id="sessions-more" class="muted" hidden></p>
  </section>
  <section aria-labelledby="audit-title">
    <h2 id="audit-title">Audit log</h2>
    <table><thead><tr><th>time</th><th>event</th><th>conversation</th><th>what</th><th>rule</th><th>result</th><th>by</th></tr></thead><tbody id="audit"></tbody></table>
  </section>
  <section aria-labelledby="tools-title">
    <h2 id="tools-title">Spec tools</h2>
    <p id="tools-status" class="muted"></p>
    <ul id="tools-problems"></ul>
    <table><thead><tr><th>time</th><th>who</th><th>action</th><th>tool</th><th>result</th><th>detail</th></tr></thead><tbody id="tools-audit"></tbody></table>
  </section>
</main>
<script>${script}</script>
</body>
</html>
`;
