/** The console's stylesheet (inline in the page). */
export const CONSOLE_STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #5d6677; --bg: #f6f7f9; --card: #fff; --line: #d9dde5; --accent: #2456c7; --ok: #1c7c3c; --bad: #b42323; --warn: #9a6400; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8ee; --muted: #9aa3b5; --bg: #14171d; --card: #1c2029; --line: #2e3442; --accent: #7aa2ff; --ok: #5fc27f; --bad: #ff7b7b; --warn: #e0b050; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1rem; align-items: baseline; padding: .7rem 1.2rem; border-bottom: 1px solid var(--line); background: var(--card); position: sticky; top: 0; }
h1 { font-size: 1.2rem; margin: 0; }
h2 { font-size: 1.05rem; margin: 1.6rem 0 .3rem; }
main { max-width: 1100px; margin: 0 auto; padding: 0 1.2rem 3rem; }
.muted { color: var(--muted); }
.count { display: inline-block; min-width: 1.6em; padding: 0 .4em; border-radius: 1em; background: var(--accent); color: #fff; font-size: .8rem; text-align: center; }
.badge { font-size: .75rem; padding: .1em .6em; border-radius: 1em; border: 1px solid var(--line); margin-left: auto; }
.badge.on { color: var(--ok); border-color: var(--ok); }
.badge.off { color: var(--bad); border-color: var(--bad); }
.cards { display: grid; gap: .7rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; }
.card h3 { margin: 0 0 .3rem; font-size: 1rem; word-break: break-all; }
.row { display: flex; flex-wrap: wrap; gap: .5rem 1.2rem; align-items: center; margin: .25rem 0; }
.label { color: var(--muted); font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, monospace; background: color-mix(in srgb, var(--line) 45%, transparent); padding: .05em .35em; border-radius: 4px; word-break: break-all; white-space: pre-wrap; unicode-bidi: bidi-override; direction: ltr; }
button { font: inherit; padding: .35em .9em; border-radius: 6px; border: 1px solid var(--line); background: var(--card); color: var(--fg); cursor: pointer; }
button:hover { border-color: var(--accent); }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { color: var(--bad); border-color: var(--bad); }
button:disabled { opacity: .5; cursor: default; }
select, input[type=text] { font: inherit; padding: .25em .4em; border-radius: 6px; border: 1px solid var(--line); background: var(--card); color: var(--fg); }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; font-size: 13px; }
th { color: var(--muted); font-weight: 600; font-size: .78rem; text-transform: uppercase; }
td.empty { color: var(--muted); text-align: center; padding: .8rem; }
.msg { margin-top: .4rem; font-size: .9rem; }
.msg.ok { color: var(--ok); }
.msg.bad { color: var(--bad); }
.notice { background: color-mix(in srgb, var(--warn) 15%, var(--card)); border: 1px solid var(--warn); border-radius: 8px; padding: .6rem .9rem; }
.outcome-approved { color: var(--ok); }
.outcome-rejected, .outcome-expired { color: var(--bad); }
.settings { display: grid; grid-template-columns: repeat(4, minmax(120px, 1fr)) auto; gap: .5rem; align-items: end; }
.settings label { display: grid; gap: .15rem; }
.chat-log { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; max-height: 460px; overflow-y: auto; display: grid; gap: .45rem; }
.bubble { border-radius: 8px; padding: .35rem .6rem; border: 1px solid var(--line); white-space: pre-wrap; }
.bubble.user { background: color-mix(in srgb, var(--accent) 10%, var(--card)); }
.bubble.system { border-color: var(--bad); color: var(--bad); }
.bubble.streaming { opacity: .8; }
.tool { font-size: 13px; word-break: break-all; }
.tool.ok .result { color: var(--ok); }
.tool.bad .result { color: var(--bad); }
.chat-form { display: flex; gap: .5rem; margin-top: .5rem; align-items: stretch; }
.chat-form textarea { flex: 1; font: inherit; padding: .35em .5em; border-radius: 6px; border: 1px solid var(--line); background: var(--card); color: var(--fg); }
`;
