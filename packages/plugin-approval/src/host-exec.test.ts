import { afterAll, describe, expect, it } from 'vitest';
import { askOf, OWNER, removeTempDirs, startKernel } from '../test/harness.js';

afterAll(removeTempDirs);

const exec = (argv: string[], cwd: string | undefined, rule: 'tier' | 'boundary' = 'boundary') =>
  askOf({ kind: 'host-exec', command: argv.join(' '), ...(cwd !== undefined ? { argv, cwd } : {}), rule });

describe('host-exec grants cover exactly one command in one directory', () => {
  it('remember on `echo a` in /p answers `echo a` in /p only: not `echo b`, not `echo a` in /q', async () => {
    const h = await startKernel();
    const first = h.gate.ask(exec(['echo', 'a'], '/p'));
    const shown = await h.nextRequest();
    expect(shown.subject).toEqual({ kind: 'host-exec', command: 'echo a', argv: ['echo', 'a'], cwd: '/p', rule: 'boundary' });
    expect(await h.desk.reply({ code: shown.code, decision: 'approve-remember', by: OWNER })).toMatchObject({ ok: true });
    expect(await first).toMatchObject({ outcome: 'approved', remembered: true });

    expect(await h.gate.ask(exec(['echo', 'a'], '/p'))).toMatchObject({ outcome: 'approved', remembered: true });
    for (const other of [exec(['echo', 'b'], '/p'), exec(['echo', 'a'], '/q'), exec(['echo', 'a', ''], '/p'), exec(['echo a'], '/p')]) {
      const asked = h.gate.ask(other);
      const { code } = await h.nextRequest();
      await h.desk.reply({ code, decision: 'reject', by: OWNER });
      expect(await asked).toMatchObject({ outcome: 'rejected' });
    }
    expect(h.requested).toHaveLength(5);
    await h.kernel.stop();
  });

  it('the input piped to it is part of the command: remember on `sh` fed one script does not cover another', async () => {
    const h = await startKernel();
    const sh = (stdin?: string) => askOf({ kind: 'host-exec', command: 'sh', argv: ['sh'], cwd: '/p', ...(stdin !== undefined ? { stdin } : {}), rule: 'boundary' });
    const first = h.gate.ask(sh('echo safe'));
    const { code } = await h.nextRequest();
    await h.desk.reply({ code, decision: 'approve-remember', by: OWNER });
    expect(await first).toMatchObject({ outcome: 'approved', remembered: true });
    expect(await h.gate.ask(sh('echo safe'))).toMatchObject({ outcome: 'approved', remembered: true });
    for (const other of [sh('rm -rf ~'), sh()]) {
      const asked = h.gate.ask(other);
      const shown = await h.nextRequest();
      await h.desk.reply({ code: shown.code, decision: 'reject', by: OWNER });
      expect(await asked).toMatchObject({ outcome: 'rejected' });
    }
    await h.kernel.stop();
  });

  it('an ask that does not name its command (no argv or cwd) cannot be remembered', async () => {
    const h = await startKernel();
    const asked = h.gate.ask(exec(['a command outside the sandbox'], undefined));
    const { code } = await h.nextRequest();
    expect(await h.desk.reply({ code, decision: 'approve-remember', by: OWNER })).toMatchObject({ ok: false, refused: 'not-rememberable' });
    await h.desk.reply({ code, decision: 'approve', by: OWNER });
    expect(await asked).toMatchObject({ outcome: 'approved', remembered: false });
    expect(h.desk.grants.list('s1')).toEqual([]);
    await h.kernel.stop();
  });
});
