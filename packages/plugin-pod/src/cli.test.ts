// `aalis pod …` against a real pod in a real kernel (bubblewrap, python3, files). The model is a
// scripted chat-completions server: the one part that cannot run here.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sessions } from '@aalis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podCommand } from './cli.js';
import { type FakeModel, startFakeModel } from './fake-model.testing.js';
import { makePlace, type Place, type PodEnv, startPod } from './harness.testing.js';

let place: Place;
let model: FakeModel;
let env: PodEnv;

beforeAll(async () => {
  place = makePlace();
  model = await startFakeModel([
    {
      match: 'CSV',
      steps: [
        { call: 'run_python', args: { code: "open('data.csv','w').write('a,b\\n1,2\\n')\nprint('wrote data.csv')" } },
        { call: 'finish', args: { conclusion: 'data.csv has one row.', summary: 'one-row CSV' } },
      ],
    },
  ]);
  env = await startPod(place, { baseURL: model.baseURL, sandboxRoot: join(place.root, 'box') });
});
afterAll(async () => {
  await env?.kernel.stop();
  await model?.close();
  rmSync(place.root, { recursive: true, force: true });
});

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io = {
    stdout(s: string) {
      stdout += s;
    },
    stderr(s: string) {
      stderr += s;
    },
  };
  const code = await podCommand(argv, io, env.pod);
  return { code, stdout, stderr };
}

describe('aalis pod', () => {
  it('prints help for itself and every command', async () => {
    const top = await cli('--help');
    expect(top.code).toBe(0);
    for (const command of ['run', 'list', 'show', 'logs', 'files', 'return', 'export', 'confirm', 'exports', 'undo', 'grants', 'revoke', 'clean', 'expire', 'root']) {
      expect(top.stdout).toContain(command);
      const one = await cli(command, '--help');
      expect(one).toMatchObject({ code: 0, stdout: expect.stringContaining(`aalis pod ${command}`) });
    }
    expect(await cli('frobnicate')).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown command 'frobnicate'") });
  });

  it('usage errors exit 2 with what is missing; refusals exit 1 with the rule', async () => {
    expect(await cli('run')).toMatchObject({ code: 2, stderr: expect.stringContaining('needs a task description') });
    expect(await cli('run', 'x', '--bogus')).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown option --bogus') });
    expect(await cli('return', 'pod-x', '--as', 'everything')).toMatchObject({ code: 2, stderr: expect.stringContaining('--as takes conclusion, file, summary, status') });
    expect(await cli('show', 'pod-none')).toMatchObject({ code: 1, stderr: expect.stringContaining('refused (not-found)') });
    expect(await cli('root', place.project)).toMatchObject({ code: 1, stderr: expect.stringContaining('refused (root-in-workspace)') });
    expect(await cli('clean')).toMatchObject({ code: 2 });
    // A positional that starts with '-' goes after '--' and reaches the service (which refuses the unknown id).
    expect(await cli('show', '--', '-pod-none')).toMatchObject({ code: 1, stderr: expect.stringContaining('refused (not-found)') });
    // A flag is never taken as the value of the flag before it.
    expect(await cli('export', 'pod-x', '--files', '--yes', '--to', 'out')).toMatchObject({ code: 2, stderr: expect.stringContaining("--files needs a value; a value that starts with '-' is written --files=-…") });
  });

  it('run, list, show, logs, files, return, export with confirmation, undo, clean', async () => {
    const print = await env.kernel.get(sessions).fingerprint('main');
    const run = await cli('run', 'make a CSV', '--subdir', 'cli', '--wait', '--json');
    expect(run.code).toBe(0);
    const task = JSON.parse(run.stdout);
    expect(task).toMatchObject({ state: 'succeeded', subdir: 'cli' });
    expect((await cli('list')).stdout).toContain(`${task.id}  succeeded`);
    expect((await cli('show', task.id)).stdout).toContain('conclusion: data.csv has one row.');
    const logs = await cli('logs', task.id);
    expect(logs.stdout).toMatch(/call run_python[\s\S]*run_python ok\n {2}exit code 0\n {2}stdout: wrote data.csv/);
    expect((await cli('files', task.id)).stdout).toMatch(/file\s+8\s+data\.csv/);
    expect(await env.kernel.get(sessions).fingerprint('main')).toBe(print);

    const planned = await cli('export', task.id, '--files', 'data.csv', '--to', place.project);
    expect(planned.stdout).toContain('nothing is written yet');
    expect(existsSync(join(place.project, 'data.csv'))).toBe(false);
    const code = /aalis pod confirm (\S+)/.exec(planned.stdout)![1]!;
    const confirmed = await cli('confirm', code);
    expect(confirmed.stdout, `exit ${confirmed.code}: ${confirmed.stderr}`).toContain(`created     ${join(place.project, 'data.csv')}`);
    expect(readFileSync(join(place.project, 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
    expect(await cli('confirm', code)).toMatchObject({ code: 1, stderr: expect.stringContaining('export-token') });
    const again = await cli('export', task.id, '--files', 'data.csv', '--to', place.project);
    expect(again.stdout).toContain('1 target(s) exist');
    const yes = await cli('export', task.id, '--files', 'data.csv', '--to', place.project, '--on-clash', 'rename', '--yes');
    expect(yes.stdout).toContain(`renamed     ${join(place.project, 'data (1).csv')}`);
    expect(await cli('export', task.id, '--files', 'data.csv', '--to', place.project, '--yes', '--remember', '--on-clash', 'skip')).toMatchObject({ code: 1, stderr: expect.stringContaining('remember-off') });
    const exportId = /undo with: aalis pod undo (\S+)/.exec(yes.stdout)![1]!;
    expect((await cli('exports')).stdout).toContain(exportId);
    expect((await cli('undo', exportId)).stdout).toContain('removed');
    expect(existsSync(join(place.project, 'data (1).csv'))).toBe(false);
    expect(await env.kernel.get(sessions).fingerprint('main')).toBe(print);

    const returned = await cli('return', task.id, '--as', 'summary');
    expect(returned.stdout).toContain(`[Isolation Pod task ${task.id}, summary] one-row CSV`);
    const history = (await env.kernel.get(sessions).get('main')).history;
    expect(history.filter((m) => m.content.includes('Isolation Pod'))).toHaveLength(1);

    expect((await cli('clean', task.id)).stdout).toContain(`cleaned 1 task(s): ${task.id}`);
    expect(existsSync(task.dirs.base)).toBe(false);
    expect(readFileSync(join(place.project, 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
    expect((await cli('clean', '--all')).stdout).toContain('cleaned 0 task(s)');
    expect((await cli('grants')).stdout).toBe('no remembered export choices\n');
  });
});
