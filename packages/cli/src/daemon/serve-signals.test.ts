// SIGINT and SIGTERM reach `aalis serve`'s handlers from the process's start. They used to be
// installed only after the `console:` line was printed, so a supervisor that read the line and
// stopped the daemon at once could signal it in between: the default action killed it (CI saw
// `stop()` give no exit status, the process ended by a signal). Here the start is held open by a
// plugin module that waits for a file, so the signal lands inside the start every time.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, deploymentDir } from './serve-process.testing.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * A deployment whose one plugin, while it loads, writes `loading` and waits for `go` (top-level
 * await): the daemon's start waits with it. With `heldStop`, the plugin runs, and its disposer
 * writes `stopping` and waits for `stopGo`: the daemon's stop waits with it.
 */
function heldDeployment(heldStop = false): { dir: string; loading: string; go: string; stopping: string; stopGo: string } {
  const dir = deploymentDir({ owners: { chat: ['alice'] }, plugins: { './plugins/hold.mjs': {} } });
  dirs.push(dir);
  const loading = join(dir, 'loading');
  const go = join(dir, 'go');
  const stopping = join(dir, 'stopping');
  const stopGo = join(dir, 'stop-go');
  // the plugin as definePlugin makes it (the module cannot import @aalis/core from /var/tmp)
  const plugin = `export default { kind: 'plugin', name: 'hold', apply() { return async () => { writeFileSync(${JSON.stringify(stopping)}, ''); while (!existsSync(${JSON.stringify(stopGo)})) await new Promise((r) => setTimeout(r, 20)); }; } };`;
  mkdirSync(join(dir, 'plugins'));
  writeFileSync(
    join(dir, 'plugins', 'hold.mjs'),
    `import { existsSync, writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(loading)}, '');
while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 20));
${heldStop ? plugin : 'export const value = 1;'}
`,
  );
  return { dir, loading, go, stopping, stopGo };
}

function serve(dir: string) {
  const child = spawn(process.execPath, [BIN, 'serve', '--dir', dir, '--port', '0'], { env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  let gone = false;
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => {
      gone = true;
      r({ code, signal });
    }),
  );
  return { child, ended, gone: () => gone, out: () => ({ stdout, stderr }) };
}

async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Sends `signal` and waits until the daemon says it received it (or has ended). */
async function signalled(daemon: ReturnType<typeof serve>, signal: NodeJS.Signals): Promise<void> {
  daemon.child.kill(signal);
  await until(() => daemon.gone() || daemon.out().stderr.includes(`${signal} received`), `the daemon to say it received ${signal}`);
}

describe('aalis serve and a signal that comes while it starts', () => {
  it('SIGTERM during the start: it stops as soon as the start ends, exit 0, no console line, the lock given up', { timeout: 120_000 }, async () => {
    const { dir, loading, go } = heldDeployment();
    const daemon = serve(dir);
    await until(() => existsSync(loading), 'the plugin to be loading');
    await signalled(daemon, 'SIGTERM');
    writeFileSync(go, '');
    const end = await daemon.ended;
    const { stdout, stderr } = daemon.out();
    expect(end, stderr).toEqual({ code: 0, signal: null });
    expect(stderr).toContain('aalis serve: SIGTERM received while starting; stopping once started');
    expect(stderr).toContain('aalis serve: stopped.');
    expect(stdout).not.toMatch(/console:/);
    expect(existsSync(join(dir, 'data', 'daemon.lock'))).toBe(false);
  });

  it('a second signal during the start exits at once with status 1, the start never ended', { timeout: 120_000 }, async () => {
    const { dir, loading } = heldDeployment();
    const daemon = serve(dir);
    await until(() => existsSync(loading), 'the plugin to be loading');
    await signalled(daemon, 'SIGINT');
    daemon.child.kill('SIGTERM');
    const end = await daemon.ended;
    const { stdout, stderr } = daemon.out();
    expect(end, stderr).toEqual({ code: 1, signal: null });
    expect(stderr).toContain('aalis serve: SIGTERM received again while starting; exiting now');
    expect(stdout).not.toMatch(/console:/);
  });

  it('a second signal during the stop that a signal during the start began: already stopping, the stop finishes (exit 0, the lock given up)', { timeout: 120_000 }, async () => {
    // the start's "exit at once" is for a start that does not end; once stopping, a second signal
    // is the stop's, as after the console line (it used to exit mid-stop: status 1, the plugins'
    // disposers not run, the lock file left)
    const { dir, loading, go, stopping, stopGo } = heldDeployment(true);
    const daemon = serve(dir);
    await until(() => existsSync(loading), 'the plugin to be loading');
    await signalled(daemon, 'SIGTERM');
    writeFileSync(go, '');
    await until(() => daemon.gone() || existsSync(stopping), "the plugin's disposer to run");
    await signalled(daemon, 'SIGINT');
    writeFileSync(stopGo, '');
    const end = await daemon.ended;
    const { stdout, stderr } = daemon.out();
    expect(end, stderr).toEqual({ code: 0, signal: null });
    expect(stderr).toContain('aalis serve: SIGINT received again; already stopping');
    expect(stderr).not.toContain('exiting now');
    expect(stderr).toContain('aalis serve: stopped.');
    expect(stdout).not.toMatch(/console:/);
    expect(existsSync(join(dir, 'data', 'daemon.lock'))).toBe(false);
  });

  it('a supervisor that stops it the moment the console line is read: exit 0 each time', { timeout: 180_000 }, async () => {
    const dir = deploymentDir({ owners: { chat: ['alice'] } });
    dirs.push(dir);
    for (let i = 0; i < 3; i++) {
      const daemon = serve(dir);
      daemon.child.stdout.on('data', () => {
        if (/^console: /m.test(daemon.out().stdout)) daemon.child.kill('SIGTERM');
      });
      const end = await daemon.ended;
      expect(end, daemon.out().stderr).toEqual({ code: 0, signal: null });
      expect(daemon.out().stdout).toMatch(/^console: /m);
    }
  });
});
