// The exec ask of run_command in confirm, through the real dispatcher and approval desk: it names
// the command (argv or shell string, cwd, stdin) and is asked every time.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { approvalDesk } from '@aalis/plugin-approval';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { owner, start } from './run-command.testing.js';

describe('run_command in confirm: the exec ask names the command and is asked every time', () => {
  let env: Awaited<ReturnType<typeof start>>;
  beforeEach(async () => {
    env = await start('confirm');
  });
  afterEach(async () => {
    await env.kernel.stop();
  });

  it('the pending ask carries the command (shell string, argv) and its cwd, and says it cannot be remembered', async () => {
    env.answer(() => []);
    const running = env.run({ command: 'echo a' });
    while (env.asked.length === 0) await new Promise((r) => setTimeout(r, 10));
    const desk = env.kernel.get(approvalDesk);
    const [pending] = desk.pending('main');
    const subject = { kind: 'host-exec', command: 'echo a', argv: ['/bin/sh', '-c', 'echo a'], cwd: env.project, rule: 'tier' };
    expect(pending).toMatchObject({ subject, rememberable: false, summary: expect.stringContaining(`\`echo a\` in ${env.project} on the host`) });
    expect(pending?.summary).toContain('asked every time');
    expect(env.asked[0]).toMatchObject({ subject, rememberable: false });
    await desk.reply({ code: pending?.code ?? '', decision: 'approve', by: owner });
    expect(await running).toMatchObject({ ok: true, value: { where: 'host', stdout: 'a\n' } });
  }, 30_000);

  it('"remember" on `echo a` is refused, and `echo a` again, `echo b` and `echo a` in another cwd are each asked', async () => {
    env.answer(() => ['approve-remember', 'approve']);
    mkdirSync(join(env.project, 'sub'));
    expect(await env.run({ command: 'echo a' })).toMatchObject({ ok: true, value: { stdout: 'a\n' } });
    expect(env.replies[0]).toMatchObject({ ok: false, refused: 'not-rememberable' });
    expect(await env.run({ command: 'echo a' })).toMatchObject({ ok: true });
    expect(await env.run({ command: 'echo b' })).toMatchObject({ ok: true, value: { stdout: 'b\n' } });
    expect(await env.run({ command: ['echo', 'a'], cwd: 'sub' })).toMatchObject({ ok: true });
    expect(env.asked.map((e) => [e.subject, e.rememberable])).toEqual([
      [{ kind: 'host-exec', command: 'echo a', argv: ['/bin/sh', '-c', 'echo a'], cwd: env.project, rule: 'tier' }, false],
      [{ kind: 'host-exec', command: 'echo a', argv: ['/bin/sh', '-c', 'echo a'], cwd: env.project, rule: 'tier' }, false],
      [{ kind: 'host-exec', command: 'echo b', argv: ['/bin/sh', '-c', 'echo b'], cwd: env.project, rule: 'tier' }, false],
      [{ kind: 'host-exec', command: 'echo a', argv: ['echo', 'a'], cwd: join(env.project, 'sub'), rule: 'tier' }, false],
    ]);
    expect(env.kernel.get(approvalDesk).grants.list('main')).toEqual([]);
  }, 30_000);

  it('a script piped to a shell is part of the ask: its stdin is shown and is what was approved', async () => {
    env.answer(() => ['approve']);
    const outcome = await env.run({ command: ['sh'], stdin: 'echo from-stdin' });
    expect(outcome).toMatchObject({ ok: true, value: { stdout: 'from-stdin\n' } });
    expect(env.asked[0]).toMatchObject({
      subject: { kind: 'host-exec', command: 'sh', argv: ['sh'], cwd: env.project, stdin: 'echo from-stdin', rule: 'tier' },
      summary: expect.stringContaining('with its input `echo from-stdin`'),
    });
  }, 30_000);

  it('a rejected exec ask runs nothing', async () => {
    env.answer(() => ['reject']);
    const outcome = await env.run({ command: 'echo run >> count.txt' });
    expect(outcome).toMatchObject({ ok: false, kind: 'denied', message: expect.stringContaining('`echo run >> count.txt`') });
    expect(existsSync(join(env.project, 'count.txt'))).toBe(false);
  }, 30_000);
});
