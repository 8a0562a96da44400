/*
 * The "daemon" that overlay.test.ts and overlay-unprivileged.test.ts drive in a process of its own.
 * `kill <scene> <tmpDir> --sleep=<token>`: starts a long command under the overlay that writes an allowed file and a
 * landing, then sleeps as `sleep <token>` (the test waits for it, then kills this process mid-run). `cases <scene>`: runs the overlay's
 * cases (as whoever runs it) and prints, as JSON, what it saw while each ran.
 */
import { existsSync, linkSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const [mode, scene, tmpDir, sleep = '601'] = process.argv.slice(2) as [string, string, string | undefined, string | undefined];
const token = sleep.replace(/^--sleep=/, ''); // passed so, or this process would have the token in its argv too
const s = JSON.parse(scene) as Scene;
// the test runs each case with both launcher settings (`all`: the launcher's child mounts the overlays)
const launcher = process.env.AALIS_TEST_LAUNCHER === 'all' ? ('all' as const) : ('on' as const);
const sb = createLinuxSandbox({ hostModel: 'overlay', launcher, ...(tmpDir ? { tmpDir } : {}) });

if (mode === 'kill') {
  await sb.run(req(s, ['sh', '-c', `echo x > unjudged.txt; mkdir -p pkg/.github/workflows; echo x > pkg/.github/workflows/ci.yml; exec sleep ${token}`], { timeoutMs: 600_000 }));
} else {
  const landings = ['pkg/.envrc', 'pkg/.github/workflows/ci.yml', 'pkg/.git/hooks/pre-commit'].map((p) => join(s.ws, p));
  mkdirSync(join(s.ws, 'pkg'), { recursive: true });
  let seen = 0;
  let polls = 0;
  let done = false;
  const poller = (async () => {
    while (!done) {
      seen += landings.filter((l) => existsSync(l)).length;
      polls += 1;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const script = `for f in "$@"; do mkdir -p "$(dirname "$f")"; echo planted > "$f"; done; echo ok > pkg/fine.txt; echo more >> src/a.txt; rm -f gone.txt; mv movable moved; sleep 1.5`;
  const landing = await sb.run(req(s, ['sh', '-c', script, 'sh', ...landings]));
  done = true;
  await poller;
  linkSync(join(s.control, 'state.json'), join(s.ws, 'alias.json'));
  const link = await sb.run(req(s, ['sh', '-c', 'echo changed > alias.json; id -u']));
  const sealed = await sb.run(req(s, ['sh', '-c', 'mkdir -p sealed/in && echo s > sealed/in/f && chmod 300 sealed']));
  const probe = (await sb.probe()).checks.find((c) => c.name === 'host-model');
  process.stdout.write(JSON.stringify({ seen, polls, landing, link, sealed, probe, policy: workspacePolicy(s).write }), () => process.exit(0));
}
