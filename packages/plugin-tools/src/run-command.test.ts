// run_command's read-only-first flow with the real Linux sandbox: a refused write is asked for
// exactly; on a yes it is committed from where the sandbox kept it, and the command never runs twice.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countIn, outside, start } from './run-command.testing.js';

describe('run_command: a refused write is asked for exactly, and retried only when the grant lets it through', () => {
  let env: Awaited<ReturnType<typeof start>>;
  beforeEach(async () => {
    env = await start('workspace');
  });
  afterEach(async () => {
    await env.kernel.stop();
  });

  it('a refused landing is asked for as that exact path; on a yes the kept write is committed and the command ran once', async () => {
    env.answer(() => ['approve']);
    const outcome = await env.run({ command: 'echo run >> count.txt; echo x > lefthook.yml' });
    const landing = join(env.project, 'lefthook.yml');
    expect(env.asked.map((e) => e.subject)).toEqual([{ kind: 'write-path', path: landing, rule: 'landing' }]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { exitCode: 0, runs: 1, grantedWrites: [landing], refusedWrites: [] } });
    expect(countIn(env.project)).toBe(1);
    expect(readFileSync(landing, 'utf8')).toBe('x\n');
  }, 30_000);

  it('a refused landing in a subdirectory is asked for as that exact path too, and committed without a second run', async () => {
    env.answer(() => ['approve']);
    mkdirSync(join(env.project, 'sub'));
    const outcome = await env.run({ command: 'echo run >> count.txt; echo x > sub/lefthook.yml' });
    const landing = join(env.project, 'sub', 'lefthook.yml');
    expect(env.asked.map((e) => e.subject)).toEqual([{ kind: 'write-path', path: landing, rule: 'landing' }]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { exitCode: 0, runs: 1, grantedWrites: [landing] } });
    expect(countIn(env.project)).toBe(1);
    expect(readFileSync(landing, 'utf8')).toBe('x\n');
  }, 30_000);

  it('a new landing the sandbox hides (.envrc, deny-read) is never asked for: the commit refuses it whatever is granted, so it is the result of one run', async () => {
    env.answer(() => ['approve']);
    const outcome = await env.run({ command: 'echo run >> count.txt; echo x > .envrc' });
    const envrc = join(env.project, '.envrc');
    expect(env.asked).toEqual([]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { runs: 1, refusedWrites: [{ path: envrc, rule: 'no-grant-helps' }] } });
    expect(countIn(env.project)).toBe(1);
    expect(existsSync(envrc)).toBe(false);
  }, 30_000);

  it('a rejected landing: the command ran once, nothing more, and the agent is told why', async () => {
    env.answer(() => ['reject']);
    const outcome = await env.run({ command: 'echo run >> count.txt; echo x > lefthook.yml' });
    expect(outcome).toMatchObject({ ok: false, kind: 'denied', message: expect.stringMatching(/lefthook\.yml.*rejected.*ran once/s) });
    expect(countIn(env.project)).toBe(1);
    expect(existsSync(join(env.project, 'lefthook.yml'))).toBe(false);
  }, 30_000);

  it('a write to a mount point the sandbox pins (renaming the git dir) is not asked for: a grant would change nothing, it runs once', async () => {
    // `.git` is a landing and the repository's git dir a writable root: the sandbox mounts it,
    // and a mount point cannot be renamed from inside (EBUSY), whatever is granted.
    env.answer(() => ['approve']);
    const outcome = await env.run({ command: 'echo run >> count.txt; mv .git .git-old' });
    expect(env.asked).toEqual([]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({
      ok: true,
      value: { runs: 1, grantedWrites: [], refusedWrites: [{ path: join(env.project, '.git'), rule: 'no-grant-helps' }], note: expect.stringContaining('not run again') },
    });
    expect(countIn(env.project)).toBe(1);
    expect(existsSync(join(env.project, '.git', 'hooks'))).toBe(true);
  }, 30_000);

  it('an existing landing that is also hidden (.envrc) is not asked for: its grant would change nothing', async () => {
    writeFileSync(join(env.project, '.envrc'), 'export A=1\n');
    env.answer(() => ['approve']);
    const outcome = await env.run({ command: 'echo run >> count.txt; echo x > .envrc' });
    expect(env.asked).toEqual([]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { runs: 1, refusedWrites: [{ path: join(env.project, '.envrc'), rule: 'no-grant-helps' }] } });
    expect(countIn(env.project)).toBe(1);
    expect(readFileSync(join(env.project, '.envrc'), 'utf8')).toBe('export A=1\n');
  }, 30_000);

  it('a never-written secret is the command result (rule secret-file), never asked, never re-run', async () => {
    env.answer(() => ['approve']);
    const outcome = await env.run({ command: 'echo run >> count.txt; echo A=1 > .env.local' });
    expect(env.asked).toEqual([]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { runs: 1, refusedWrites: [{ path: join(env.project, '.env.local'), rule: 'secret-file' }] } });
    expect(countIn(env.project)).toBe(1);
    expect(existsSync(join(env.project, '.env.local'))).toBe(false);
    // what the sandbox took away is a field of the outcome the agent sees, not text in stderr
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { movedAside: [{ path: join(env.project, '.env.local'), reason: 'kept-off' }] } });
    expect((outcome as { value: { stderr: string } }).value.stderr).not.toContain('were kept off the host');
  }, 30_000);

  it('the control plane is the command result (rule control-plane), never asked, never re-run', async () => {
    env.answer(() => ['approve']);
    const control = join(env.kernel.dataDir ?? '', 'config.yaml');
    const outcome = await env.run({ command: `echo run >> count.txt; echo x > ${control}` });
    expect(env.asked).toEqual([]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { runs: 1, refusedWrites: [{ path: control, rule: 'control-plane' }] } });
    expect(countIn(env.project)).toBe(1);
    expect(existsSync(control)).toBe(false);
  }, 30_000);

  it('a command naming more refused writes than can be asked one by one gets no ask and no re-run', async () => {
    env.answer(() => ['approve']);
    // stderr is the command's own: it can claim any number of refusals, and none floods the person with asks.
    const spoof = Array.from({ length: 20 }, (_, i) => `echo "x: cannot create '${outside}/f${i}': Read-only file system" >&2`).join('; ');
    const outcome = await env.run({ command: `echo run >> count.txt; ${spoof}` });
    expect(env.asked).toEqual([]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { runs: 1, note: expect.stringMatching(/20 writes.*too many to ask/) } });
    expect(countIn(env.project)).toBe(1);
  }, 30_000);

  it('a refused write in a directory whose name is not UTF-8 is not asked for (it cannot be named exactly) and runs once', async () => {
    env.answer(() => ['approve']);
    const dir = mkdtempSync(join(outside, 'n-'));
    mkdirSync(Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0xff])]));
    const outcome = await env.run({ command: `echo run >> count.txt; echo x > ${dir}/$(printf '\\377')/new.txt` });
    expect(env.asked).toEqual([]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { runs: 1, refusedWrites: [{ rule: 'not-utf8' }] } });
    expect(countIn(env.project)).toBe(1);
  }, 30_000);

  it('a call cancelled while the command runs is not asked for its refused writes and not run again', async () => {
    env.answer(() => ['approve']);
    const dir = mkdtempSync(join(outside, 'c-'));
    const controller = new AbortController();
    // The refused write comes first and count.txt marks that it was tried: under load the sandbox's
    // start can take longer than any fixed wait.
    const running = env.run({ command: `echo x > ${dir}/new.txt; echo run >> count.txt; sleep 30` }, controller.signal);
    const started = Date.now();
    while (!existsSync(join(env.project, 'count.txt')) && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    const outcome = await running;
    expect(env.asked).toEqual([]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { runs: 1, signal: 'SIGKILL', note: expect.stringContaining('cancelled') } });
    expect(countIn(env.project)).toBe(1);
    expect(existsSync(join(dir, 'new.txt'))).toBe(false);
  }, 30_000);

  it('a landing file in a new landing directory: the directory and then the file are asked for exactly, and both are committed from the kept run', async () => {
    // The Linux sandbox captures writes in an overlay and judges them after the command
    // (sandbox-linux's README): the refused write is reported by the file's own path, so both
    // asks are exact and the retry with both granted is not refused again.
    env.answer(() => ['approve']);
    mkdirSync(join(env.project, 'sub'));
    const command = 'echo run >> count.txt; mkdir -p sub/.vscode && echo {} > sub/.vscode/tasks.json';
    const dir = join(env.project, 'sub', '.vscode');
    const tasks = join(dir, 'tasks.json');
    const first = await env.run({ command });
    expect(env.asked.map((e) => e.subject)).toMatchObject([
      { kind: 'write-path', path: dir, rule: 'landing' },
      { kind: 'write-path', path: tasks, rule: 'landing' },
    ]);
    expect(first, JSON.stringify(first)).toMatchObject({ ok: true, value: { exitCode: 0, runs: 1, grantedWrites: [dir, tasks], refusedWrites: [] } });
    expect(readFileSync(tasks, 'utf8')).toBe('{}\n');
    expect(countIn(env.project)).toBe(1);
  }, 30_000);

  it('a new file outside the roots is asked for by the directory it is made in, and retried once', async () => {
    env.answer(() => ['approve']);
    const dir = mkdtempSync(join(outside, 'd-'));
    const outcome = await env.run({ command: `echo run >> count.txt; echo made > ${dir}/new.txt` });
    expect(env.asked.map((e) => e.subject)).toEqual([{ kind: 'write-path', path: dir, toMake: join(dir, 'new.txt'), rule: 'boundary' }]);
    expect(env.asked[0]?.summary).toContain(`writing in ${dir}, to make ${join(dir, 'new.txt')} there`);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { exitCode: 0, runs: 2, grantedWrites: [dir] } });
    expect(readFileSync(join(dir, 'new.txt'), 'utf8')).toBe('made\n');
    expect(countIn(env.project)).toBe(2);
  }, 30_000);

  it('a landing outside the roots needs its directory and then the name: two asks, each exact, one retry', async () => {
    env.answer(() => ['approve']);
    const dir = mkdtempSync(join(outside, 'l-'));
    const outcome = await env.run({ command: `echo run >> count.txt; echo x > ${dir}/lefthook.yml` });
    expect(env.asked.map((e) => e.subject)).toEqual([
      { kind: 'write-path', path: dir, toMake: join(dir, 'lefthook.yml'), rule: 'boundary' },
      { kind: 'write-path', path: join(dir, 'lefthook.yml'), rule: 'landing' },
    ]);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, value: { exitCode: 0, runs: 2 } });
    expect(readFileSync(join(dir, 'lefthook.yml'), 'utf8')).toBe('x\n');
    expect(countIn(env.project)).toBe(2);
  }, 30_000);
});
