import { spawnSync } from 'node:child_process';
import { vanishedRootMapMount } from './vanished-mount.js';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_ENV } from './launch-env.js';
import { mountOperands, planOverlays, prepareLayers } from './overlay-mount.js';
import { planRootMap, rootMapStep } from './root-map.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

// A root daemon's run under the overlay model: the root map's python step mounts the overlays
// itself (root-map.helper.ts), so the chain is python3 then bwrap, no shell and no mount(8).
let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => s.cleanup());

describe.skipIf(process.getuid?.() !== 0)('a root daemon\'s launch chain', { timeout: 120_000 }, () => {
  it('is the root map\'s python3, which mounts the overlays, then bwrap: no shell, no mount(8)', async () => {
    const sb = createLinuxSandbox({ hostModel: 'overlay' });
    const plan = await sb.plan(req(s, ['/bin/true']));
    const bwrapAt = plan.argv.findIndex((a) => a.endsWith('/bwrap'));
    const chain = plan.argv.slice(0, bwrapAt);
    expect(chain[0]).toMatch(/python3$/);
    expect(chain).not.toContain('/bin/sh');
    expect(chain.some((a) => /\/(u?mount|unshare)$/.test(a))).toBe(false);
    // the workspace is one of the overlays the step mounts
    expect(chain).toContain(s.ws);
    const r = await sb.run(req(s, ['sh', '-c', 'echo made > made.txt && cat made.txt']));
    expect(r.stdout).toBe('made\n');
    expect(existsSync(join(s.ws, 'made.txt'))).toBe(true);
  });

  it('a mount the step cannot make: exit 125, said on stderr, and the command never runs', async () => {
    const plan = planRootMap();
    if (!plan.ok) throw new Error(plan.detail);
    const lower = join(s.root, 'chain-lower');
    mkdirSync(lower, { recursive: true });
    const [o] = planOverlays([lower], join(s.root, 'chain-layers'));
    await prepareLayers([o!]);
    const marker = join(s.root, 'chain-ran');
    // an upper layer that is a file, not a directory: the kernel refuses the overlay
    const bad = { ...o!, upper: join(s.root, 'chain-upper-file') };
    writeFileSync(bad.upper, '');
    const step = rootMapStep(plan.python, plan.range, [], mountOperands([bad]));
    const r = spawnSync(step[0]!, [...step.slice(1), '/usr/bin/touch', marker], { env: { ...LAUNCH_ENV }, encoding: 'utf8' });
    expect(r.status).toBe(125);
    expect(r.stderr).toContain(`aalis-overlay: cannot mount an overlay on ${lower}`);
    expect(existsSync(marker)).toBe(false);
    // the same step with good layers runs it (the refusal above is the mount's, not the step's)
    const ok = rootMapStep(plan.python, plan.range, [], mountOperands([o!]));
    const r2 = spawnSync(ok[0]!, [...ok.slice(1), '/usr/bin/touch', marker], { env: { ...LAUNCH_ENV }, encoding: 'utf8' });
    expect(r2.stderr).toBe('');
    expect(r2.status).toBe(0);
  });

  it('a hidden entry removed since the scan: the step exits 125 naming it, the command never runs, and the failure is one to try again', async () => {
    const plan = planRootMap();
    if (!plan.ok) throw new Error(plan.detail);
    const marker = join(s.root, 'hide-ran');
    const gone = join(s.root, 'gone-dir', '.env');
    const step = rootMapStep(plan.python, plan.range, [], mountOperands([]), ['f', '/dev/null', gone]);
    const r = spawnSync(step[0]!, [...step.slice(1), '/usr/bin/touch', marker], { env: { ...LAUNCH_ENV }, encoding: 'utf8' });
    expect(r.status).toBe(125);
    expect(r.stderr).toContain(`aalis-rootmap: cannot hide the file ${gone}: mount failed: No such file or directory`);
    expect(existsSync(marker)).toBe(false);
    expect(vanishedRootMapMount(r.stderr)).toBe(true);
    // a directory there now: not vanished, so not tried again (a file over a directory is refused)
    mkdirSync(gone, { recursive: true });
    const r2 = spawnSync(step[0]!, [...step.slice(1), '/usr/bin/touch', marker], { env: { ...LAUNCH_ENV }, encoding: 'utf8' });
    expect(r2.status).toBe(125);
    expect(vanishedRootMapMount(r2.stderr)).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });
});
