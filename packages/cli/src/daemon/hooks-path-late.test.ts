// A `core.hooksPath` set while the daemon runs (as `husky init` or `git config core.hooksPath
// .githooks` do), against a real `aalis serve`: the directory it names is a landing at once, so a
// sandboxed command or write_file cannot put a hook there unasked (the person's next `git commit`
// would run it on the host, outside every sandbox). Before, the hooks directories were read only
// when the daemon started, and both writes landed without an ask.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

let dir: string;
let daemon: ServeProcess;
beforeAll(async () => {
  // asks nobody answers expire soon
  dir = deploymentDir({ owners: { chat: ['alice'] }, approval: { timeoutMs: 2000 } });
  daemon = await startServe(dir);
}, 60_000);
afterAll(async () => {
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('core.hooksPath set after the daemon started', () => {
  it('its directory is a landing at once: neither a sandboxed command nor write_file puts a hook there unasked', { timeout: 180_000 }, async () => {
    const turn = ownerTurn('chat-hooks-late');
    const pwd = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'pwd' }, turn });
    const ws = String(pwd.body.value.stdout).trim();
    execFileSync('git', ['init', '-q', ws]);
    execFileSync('git', ['-C', ws, 'config', 'core.hooksPath', 'githooks-late']);

    const ran = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: "mkdir -p githooks-late && printf '#!/bin/sh\\necho pwned\\n' > githooks-late/pre-commit" }, turn });
    expect(JSON.stringify(ran.body)).toMatch(/githooks-late/); // named as refused (or asked and expired)
    const wrote = await daemon.api('POST', '/api/tools/call', { tool: 'write_file', params: { path: 'githooks-late/post-commit', content: '#!/bin/sh\necho pwned\n' }, turn });
    expect(wrote.body).toMatchObject({ ok: false });
    expect(existsSync(join(ws, 'githooks-late', 'pre-commit'))).toBe(false);
    expect(existsSync(join(ws, 'githooks-late', 'post-commit'))).toBe(false);
  });

  it('an included config that is a FIFO refuses the call, naming the file and the fix; the daemon goes on answering', { timeout: 120_000 }, async () => {
    // before, the daemon read the include by path: the FIFO, with no writer, held its thread for good
    const turn = ownerTurn('chat-hooks-fifo');
    const pwd = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'pwd' }, turn });
    const ws = String(pwd.body.value.stdout).trim();
    execFileSync('git', ['init', '-q', ws]);
    execFileSync('git', ['-C', ws, 'config', 'include.path', '../team.gitconfig']);
    const fifo = join(ws, 'team.gitconfig');
    execFileSync('mkfifo', [fifo]);
    try {
      const refused = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'echo should-not-run' }, turn });
      const text = JSON.stringify(refused.body);
      expect(refused.body).toMatchObject({ ok: false });
      expect(text).toContain('git-config-unreadable');
      expect(text).toContain(fifo);
      expect(text).toContain('fix: Make');
      expect(text).not.toContain('should-not-run\\n');
      expect((await daemon.api('GET', '/healthz', undefined, null)).status).toBe(200);
    } finally {
      rmSync(fifo);
    }
    const after = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'echo ran' }, turn });
    expect(after.body).toMatchObject({ ok: true });
  });
});
