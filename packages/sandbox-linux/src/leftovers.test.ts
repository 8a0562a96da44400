import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPidsCgroup } from './pid-limit.js';
import { listTree, makeScene, req, type Scene, until, untilProcess, workspacePolicy } from './scene.testing.js';
import { FANOTIFY_OPENS_PY } from './fanotify.testing.js';
import { createLinuxSandbox } from './service.js';

let s: Scene;
let tmpDir: string;

beforeAll(() => {
  s = makeScene();
  tmpDir = join(s.root, 'daemon-tmp'); // the run folders' parent, watched on its own
  mkdirSync(tmpDir);
});
afterAll(() => s.cleanup());

/** The daemons this file kills (a live daemon keeps its idle run cgroups for reuse: pid-limit.ts). */
const killed = new Set<number>();

/**
 * Per-run pids cgroups (a root daemon's pid limit) of daemons this file killed: none must be left
 * after the next start. Other files' daemons, killed mid-run in parallel, leave theirs to the
 * next start anywhere on the machine: not this test's to judge (they made it fail in a loaded run).
 */
function deadRunCgroups(): string[] {
  const base = findPidsCgroup();
  if (!base || !existsSync(base)) return [];
  return readdirSync(base).filter((n) => killed.has(Number(/^aalis-sbx-(\d+)-/.exec(n)?.[1])));
}

/**
 * The host's mounts at or under the scene (its workspace, home, run folders): where a leak of
 * these runs would be. Mounts elsewhere come and go with other test files running in parallel
 * (docker's, another scene's tmpfs) and are not this test's to judge.
 */
function sceneMounts(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => {
      const point = line.split(' ')[4];
      return point !== undefined && (point === s.root || point.startsWith(`${s.root}/`));
    });
}

/** What must be the same before and after: the run-folder parent, the workspace, the host's mounts under the scene, killed daemons' run cgroups. */
function state() {
  return {
    cgroups: deadRunCgroups(),
    tmp: readdirSync(tmpDir).sort(),
    ws: listTree(s.ws).filter((p) => !p.includes('/.git/objects/')),
    mounts: sceneMounts(),
  };
}

function pidsOf(name: string, needle: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmd.startsWith(name) && cmd.includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** slirp4netns processes whose sandbox is gone: what a leak would look like (others' live runs do not count). */
function orphanedSlirps(): number[] {
  return pidsOf('slirp4netns', '').filter((pid) => {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const target = args[args.indexOf('tap0') - 1]; // slirp4netns ... <sandbox pid> tap0
    return target !== undefined && !existsSync(`/proc/${target}`);
  });
}


describe('nothing is left behind on the host', { timeout: 120_000 }, () => {
  // placeholders in the workspace, the empty file for hidden files, and slirp for network on
  const policy = () => workspacePolicy(s, { network: 'on' });

  it('after a run that used placeholders (look model), hidden files and the network', async () => {
    const sb = createLinuxSandbox({ tmpDir, hostModel: 'look' }); // the overlay makes no placeholders
    const before = state();
    const r = await sb.run(req(s, ['sh', '-c', 'ls -a; cat .env; ls /tmp'], { policy: policy() }));
    expect(r.stdout).toContain('.envrc'); // a placeholder was there during the run
    expect(state()).toEqual(before);
    expect(existsSync(join(s.ws, '.envrc'))).toBe(false);
  });

  it('after a timeout', async () => {
    const sb = createLinuxSandbox({ tmpDir });
    const before = state();
    const r = await sb.run(req(s, ['sleep', '30'], { policy: policy(), timeoutMs: 300 }));
    expect(r.timedOut).toBe(true);
    await sb.close(); // the run folder's removal, which its result does not wait for
    expect(state()).toEqual(before);
    await until(() => orphanedSlirps().length === 0, 'no slirp4netns outlives its sandbox');
  });

  it('after the daemon is killed mid-run: the sandbox dies with it, the next start sweeps', async () => {
    const before = state();
    const marker = join(s.ws, 'x-started');
    const token = `600.${process.pid}${Date.now() % 100_000}`; // this run's sleep, not another test's
    const child = execa(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'leftovers.child.testing.ts'), JSON.stringify(s), tmpDir, marker, `--sleep=${token}`], {
      cwd: join(import.meta.dirname, '..'),
      reject: false,
    });
    if (child.pid !== undefined) killed.add(child.pid);
    // the sleep runs (the marker alone came before its exec, which a loaded machine can delay)
    await untilProcess(token);
    expect(existsSync(marker)).toBe(true);
    child.kill('SIGKILL');
    await child;
    // --die-with-parent: bwrap and everything in the sandbox go; slirp4netns sees its exit fd close
    await until(() => pidsOf('sleep', token).length === 0 && orphanedSlirps().length === 0, 'the sandbox and its slirp4netns died with the daemon');
    rmSync(marker);
    expect(state().tmp).not.toEqual(before.tmp); // the killed daemon's run folder and placeholders are still there
    createLinuxSandbox({ tmpDir }); // the next daemon start
    expect(state()).toEqual(before);
  });
});

/** Holds every open of the directory argv[1] (fanotify permission events) until a byte comes on stdin; says "held" at the first. */
const HOLD_OPENS = `${FANOTIFY_OPENS_PY}
held, go = [], False
while True:
    ready = select.select([fd] + ([] if go else [0]), [], [])[0]
    if 0 in ready:
        os.read(0, 1); go = True
        for e in held: os.write(fd, struct.pack("iI", e, 1)); os.close(e)
        held = []
    if fd in ready:
        buf, off = os.read(fd, 4096), 0
        while off < len(buf):
            size, _, _, _, _, e, _ = struct.unpack_from("IBBHQii", buf, off)
            off += size
            if go: os.write(fd, struct.pack("iI", e, 1)); os.close(e)
            else:
                held.append(e)
                if len(held) == 1: print("held", flush=True)
`;

describe.skipIf(process.getuid?.() !== 0)('a daemon killed while a cold overlay run scans', { timeout: 120_000 }, () => {
  it('leaves a run folder whose sweep says no writes were lost: no command had started', async () => {
    // the run makes its layers while its scan runs (overlay-run.ts makeLayers); the scan is held at
    // its open of the data directory (an ancestor of the session temp), and the daemon killed there. Before, the next start said
    // "a daemon that died during a run left writes never judged" of a run that never ran anything
    const s = makeScene();
    const tmpDir = mkdtempSync(join(tmpdir(), 'aalis-scan-killed-'));
    const holder = spawn('python3', ['-c', HOLD_OPENS, s.data], { stdio: ['pipe', 'pipe', 'inherit'] });
    let said = '';
    holder.stdout!.on('data', (b: Buffer) => (said += b.toString()));
    let daemon: ReturnType<typeof spawn> | undefined;
    try {
      await until(() => said.includes('ready') || holder.exitCode !== null, 'the holder is ready');
      expect(said).toContain('ready');
      const here = import.meta.dirname;
      const script = `import { req } from ${JSON.stringify(join(here, 'scene.testing.ts'))}; import { createLinuxSandbox } from ${JSON.stringify(join(here, 'service.ts'))};
        const s = JSON.parse(process.argv[1]); await createLinuxSandbox({ hostModel: 'overlay', tmpDir: process.argv[2] }).run(req(s, ['true']));`;
      daemon = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, JSON.stringify(s), tmpDir], { stdio: 'ignore' });
      const pid = daemon.pid!;
      await until(() => said.includes('held'), "the run's scan is held");
      const [folder] = readdirSync(tmpDir).filter((n) => n.startsWith(`aalis-sbx-${pid}-`));
      expect(folder).toBeDefined();
      expect(readdirSync(join(tmpDir, folder!))).toContain('overlay'); // its layers, made beside the scan
      daemon.kill('SIGKILL');
      holder.stdin!.write('x'); // the held open answered: the killed daemon can end
      await until(() => !existsSync(`/proc/${pid}`), 'the daemon is gone');
      const next = createLinuxSandbox({ hostModel: 'overlay', tmpDir }); // its start sweeps the folder
      try {
        const r = await next.run(req(s, ['true']));
        expect(r.exitCode).toBe(0);
        expect(r.stderr).not.toContain('never judged');
      } finally {
        await next.close();
      }
      expect(readdirSync(tmpDir)).toEqual([]);
    } finally {
      daemon?.kill('SIGKILL');
      holder.kill();
      rmSync(tmpDir, { recursive: true, force: true });
      s.cleanup();
    }
  });
});
