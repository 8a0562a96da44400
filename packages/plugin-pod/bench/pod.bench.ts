// What a pod task costs beyond the work itself. Measured in one run, with baselines:
//  - one `python3 -c` spawned directly on the host (no sandbox) - the floor;
//  - the same code through the sandbox under the pod's policy (bubblewrap + seccomp);
//  - a whole pod task with one run_python step: start, model round trips (a scripted
//    chat-completions server on loopback stands in for the model), sandboxed run, logs, finish;
//  - exporting 50 files (plan + confirm) against a plain copy of the same files.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sandbox } from '@aalis/api-reach';
import { reachView } from '@aalis/plugin-reach';
import { startFakeModel } from '../src/fake-model.testing.js';
import { makePlace, startPod } from '../src/harness.testing.js';
import { podEnvOf, podPolicyOf } from '../src/policy.js';

const CODE = "open('out.txt','w').write('x')";
const ROUNDS = 15;

async function time(label: string, rounds: number, body: (i: number) => Promise<unknown> | unknown): Promise<number> {
  await body(-1); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) await body(i);
  const ms = Number(process.hrtime.bigint() - start) / 1e6 / rounds;
  console.log(`${label.padEnd(58)} ${ms.toFixed(1).padStart(8)} ms`);
  return ms;
}

const place = makePlace();
const files = Array.from({ length: 50 }, (_, i) => ({ call: 'write_file', args: { path: `many/f${i}.txt`, content: `file ${i}\n`.repeat(50) } }));
const model = await startFakeModel([
  { match: 'bench', steps: [{ call: 'run_python', args: { code: CODE } }, { say: 'done' }] },
  { match: 'many files', steps: [{ calls: files }, { say: 'done' }] },
]);
const env = await startPod(place, { baseURL: model.baseURL, sandboxRoot: join(place.root, 'box') });
try {
  const host = await time('/usr/bin/python3 on the host, no sandbox (baseline)', ROUNDS, () => execFileSync('/usr/bin/python3', ['-c', CODE], { cwd: place.outside }));
  const first = await env.pod.wait((await env.pod.start({ task: 'bench warm' })).id);
  const service = env.kernel.get(sandbox);
  const podInstance = env.kernel.get(reachView).instance();
  const policy = podPolicyOf(first.dirs, podInstance.lists, { allowWrites: true, network: 'off', localPorts: [] });
  const sandboxed = await time("python3 in the sandbox under the pod's policy", ROUNDS, () =>
    service.run({ argv: ['python3', '-c', CODE], cwd: first.dirs.work, env: podEnvOf(first.dirs, '/usr/local/bin:/usr/bin:/bin'), timeoutMs: 30_000, policy }),
  );
  const task = await time('a whole pod task with one run_python step', ROUNDS, async () => env.pod.wait((await env.pod.start({ task: 'bench' })).id));

  const many = await env.pod.wait((await env.pod.start({ task: 'many files' })).id);
  const plain = join(place.root, 'plain');
  const copy = await time('copy 50 files with copyFileSync (baseline)', ROUNDS, (i) => {
    const dir = join(plain, String(i));
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 50; f++) copyFileSync(join(many.dirs.work, 'many', `f${f}.txt`), join(dir, `f${f}.txt`));
  });
  const exported = await time('export 50 files (plan, confirm, log, hashes)', ROUNDS, async (i) => {
    const started = await env.pod.exportFiles({ taskId: many.id, files: ['many'], to: join(place.project, `e${i}`) });
    if (started.state === 'needs-confirmation') await env.pod.confirmExport({ token: started.token });
  });
  console.log(`\nsandbox / host python:        ${(sandboxed / host).toFixed(2)}x`);
  console.log(`pod task / sandboxed python:  ${(task / sandboxed).toFixed(2)}x (the rest is model round trips, logs and state)`);
  console.log(`export / plain copy:          ${(exported / copy).toFixed(2)}x`);
} finally {
  await env.kernel.stop();
  await model.close();
  rmSync(place.root, { recursive: true, force: true });
}
