// `aalis chat` as a real process against the real daemon (`aalis serve`), its input piped as a
// person would type it. The model is the only stand-in: @aalis/model's scripted chat-completions
// server, streaming.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ScriptedModel, startScriptedModel } from '@aalis/model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, deploymentDir, type ServeProcess, startServe } from './daemon/serve-process.testing.js';

let dir: string;
let outside: string;
let model: ScriptedModel;
let daemon: ServeProcess;

beforeAll(async () => {
  dir = deploymentDir();
  outside = `${realpathSync(dir)}-outside`;
  mkdirSync(outside);
  model = await startScriptedModel([
    { match: 'copy it out', steps: [{ call: 'write_file', args: { path: join(outside, 'from-the-repl.txt'), content: 'typed yes\n' } }, { say: 'Copied it out for you.' }] },
    { match: 'separator', steps: [{ say: 'one\u2028two\u2029three' }] },
    { match: 'still there', steps: [{ say: 'Still listening.' }] },
    { match: 'another', steps: [{ call: 'write_file', args: { path: join(outside, 'refused.txt'), content: 'x' } }, { say: 'Then I leave it.' }] },
    {
      match: 'spoof',
      steps: [
        { call: 'write_file', args: { path: join(outside, 'notes.txt\x1b[2K\rwrite notes.txt'), content: 'x' } },
        { say: 'Done.\x1b]52;c;c3Bvb2Y=\x07 \u202etxt.exe\r(answered)\n' },
      ],
    },
  ]);
  writeFileSync(join(dir, 'aalis.config.json'), JSON.stringify({ approval: { timeoutMs: 60_000 }, model: { baseURL: model.baseURL, model: 'scripted', requestTimeoutMs: 10_000 } }));
  daemon = await startServe(dir);
});
afterAll(async () => {
  await daemon?.stop();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** `aalis chat` with piped input: type lines, wait for output. */
function startChat(args: readonly string[]) {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'chat', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    type: (line: string) => child.stdin?.write(`${line}\n`),
    end: () => child.stdin?.end(),
    out: () => out,
    err: () => err,
    exited,
    async until(text: string | RegExp, ms = 20_000) {
      const end = Date.now() + ms;
      while (!(typeof text === 'string' ? out.includes(text) : text.test(out))) {
        if (Date.now() > end) throw new Error(`no ${String(text)} in the output within ${ms} ms:\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

describe('aalis chat', () => {
  // F7: a raw U+2028 in an SSE data line cut the frame for chat's regex, and its event stream ended for good.
  it('shows a reply holding U+2028 and U+2029 (escaped), and its stream goes on', async () => {
    const chat = startChat(['--dir', dir, '--session', 'separators']);
    await chat.until("chatting in 'separators'");
    chat.type('a separator please');
    await chat.until(/one\\u2028two\\u2029three\n+\(answered\)/);
    chat.type('are you still there');
    await chat.until(/Still listening\.\n+\(answered\)/);
    chat.type('/quit');
    expect(await chat.exited).toBe(0);
    expect(chat.out()).not.toMatch(/[\u2028\u2029]/);
  }, 60_000);

  // A terminal obeys what it prints (first: the next test leaves the person's last used settings in plan mode,
  // where this write would be refused without an ask): \r and ESC[2K rewrote the ask's line (another path shown than
  // the one approved), OSC 52 set the clipboard, U+202E reordered the text.
  it('control characters from the model or a tool call are shown as escapes, never obeyed by the terminal', async () => {
    const chat = startChat(['--dir', dir, '--session', 'spoofed']);
    await chat.until("chatting in 'spoofed'");
    chat.type('spoof the ask');
    // the summary's line, then the path whole on its own marked line, escaped the same way
    await chat.until(/\? .*notes\.txt\\x1b\[2K\\x0dwrite notes\.txt.*\n {2}write the path:\n {4}│ .*notes\.txt\\x1b\[2K\\x0dwrite notes\.txt\n {2}rule: /);
    chat.type('n');
    await chat.until(/Done\.\\x1b\]52;c;c3Bvb2Y=\\x07 \\u202etxt\.exe\\x0d\(answered\)\n+\(answered\)/);
    chat.type('/quit');
    expect(await chat.exited).toBe(0);
    expect(chat.out()).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\u202e]/);
  }, 60_000);

  it('streams the reply, shows each tool call, takes the answer to an ask at the prompt, and switches mode and tier', async () => {
    const chat = startChat(['--dir', dir, '--session', 'repl']);
    await chat.until("chatting in 'repl'");
    chat.type('please copy it out');
    await chat.until(/\? .*from-the-repl\.txt[\s\S]*answer: y/);
    chat.type('maybe');
    await chat.until('answer the ask first');
    chat.type('y');
    await chat.until('Copied it out for you.\n(answered)');
    await chat.until('ok write_file');
    expect(readFileSync(join(outside, 'from-the-repl.txt'), 'utf8')).toBe('typed yes\n');
    chat.type('another one');
    await chat.until(/\? .*refused\.txt/);
    chat.type('n not outside the workspace, please');
    // The run mode changes only between turns: wait for this one's end.
    await chat.until('Then I leave it.\n(answered)');
    expect(chat.out()).toMatch(/refused write_file \(denied\): .*rejected: not outside the workspace, please/);
    chat.type('/mode plan');
    await chat.until('run mode plan, tier readonly');
    chat.type('/tier full');
    await chat.until(/! refused: .*plan mode.*\(plan-locks-tier\)/);
    chat.type('/stop');
    await chat.until('nothing is running.');
    chat.type('/quit');
    expect(await chat.exited).toBe(0);
    expect(chat.err()).toBe('');
  }, 90_000);

  it('--help answers: the commands, how an ask is answered, where the daemon is found', async () => {
    const chat = startChat(['--help']);
    chat.end();
    expect(await chat.exited).toBe(0);
    expect(chat.out()).toMatch(/^aalis chat:/);
    for (const part of ['/mode plan|ask|execute', '/tier', '/stop', 'approve once', 'reject', '--session', '--url']) expect(chat.out()).toContain(part);
  });

  it('says clearly when no daemon runs there', async () => {
    const empty = deploymentDir();
    try {
      const chat = startChat(['--dir', empty]);
      chat.end();
      expect(await chat.exited).toBe(2);
      expect(chat.err()).toMatch(/aalis chat: no daemon address at .*is 'aalis serve' running for this deployment\?/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  // Last: it restarts the file's daemon (on the same port, so the address chat read still holds).
  it('reconnects its event stream when it drops, and says so on stderr', async () => {
    const chat = startChat(['--dir', dir, '--session', 'dropped']);
    await chat.until("chatting in 'dropped'");
    const port = new URL(daemon.url).port;
    await daemon.stop();
    const waitErr = async (text: RegExp) => {
      const end = Date.now() + 30_000;
      while (!text.test(chat.err())) {
        if (Date.now() > end) throw new Error(`no ${String(text)} on stderr:\n${chat.err()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await waitErr(/event stream dropped; reconnecting/);
    daemon = await startServe(dir, ['--port', port]);
    expect(new URL(daemon.url).port).toBe(port);
    await waitErr(/the event stream is back/);
    chat.type('are you still there');
    await chat.until(/Still listening\.\n+\(answered\)/);
    chat.type('/quit');
    expect(await chat.exited).toBe(0);
  }, 90_000);
});
