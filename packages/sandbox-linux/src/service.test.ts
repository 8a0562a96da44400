import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gate, makeScene, req, type Scene, until, untilProcess } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const sb = createLinuxSandbox();
let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => s.cleanup());

function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('LinuxSandbox.run', { timeout: 120_000 }, () => {
  // bwrap always sets PWD to the directory it changed into: the cwd of the request, no daemon data.
  it('gives the command exactly the request environment (plus PWD, the cwd, and the temp variables naming the session temp), nothing of the daemon', async () => {
    process.env.AALIS_DAEMON_SECRET = 'leak';
    try {
      const r = await sb.run(req(s, ['/usr/bin/env'], { env: { ONLY: 'this', PATH: '/usr/bin:/bin' } }));
      const tmp = [`TEMP=${s.sessionTmp}`, `TMP=${s.sessionTmp}`, `TMPDIR=${s.sessionTmp}`];
      expect(r.stdout.trim().split('\n').sort()).toEqual(['ONLY=this', 'PATH=/usr/bin:/bin', `PWD=${s.ws}`, ...tmp]);
    } finally {
      delete process.env.AALIS_DAEMON_SECRET;
    }
  });

  it('runs in the cwd, feeds stdin, reports the exit code', async () => {
    const r = await sb.run(req(s, ['sh', '-c', 'pwd; cat; exit 7'], { stdin: 'from stdin' }));
    expect(r.stdout).toBe(`${s.ws}\nfrom stdin`);
    expect(r.exitCode).toBe(7);
    expect(r.writeDenied).toBe(false);
  });

  it('keeps only maxOutputBytes of output and says so', async () => {
    const r = await sb.run(req(s, ['sh', '-c', 'head -c 200000 /dev/zero | tr "\\0" a'], { maxOutputBytes: 1000 }));
    expect(r.stdout.length).toBe(1000);
    expect(r.truncated).toBe(true);
    expect(r.exitCode).toBe(0);
  });

  it('kills the whole process tree at the timeout', async () => {
    const marker = `${900000 + Math.floor(Math.random() * 99999)}`;
    const started = Date.now();
    const r = await sb.run(req(s, ['sh', '-c', `sleep ${marker} & (sleep ${marker} &) ; sleep ${marker}`], { timeoutMs: 400 }));
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe('SIGKILL');
    // the run did not wait for its sleeps (900,000 s and more); the margin is for a loaded machine's set-up
    expect(Date.now() - started).toBeLessThan(60_000);
    // killed, not left running: each goes, however long the kernel takes to reap them
    await until(() => processesWith(`sleep\0${marker}`).length === 0, 'the sleeps of the timed-out run are gone');
  });

  it('stops on abort', async () => {
    const ac = new AbortController();
    const token = `30.${process.pid}${Date.now() % 100_000}`;
    const run = sb.run(req(s, ['sh', '-c', `exec sleep ${token}`], { signal: ac.signal }));
    await untilProcess(token); // aborted while it runs (a timer could fire before the start, another case)
    ac.abort();
    const r = await run;
    expect(r.signal).toBe('SIGKILL');
    expect(r.timedOut).toBe(false);
  });

  it.each(['off', 'on'] as const)('never starts a command aborted before it runs, and leaves no process behind (network %s)', async (network) => {
    const marker = `${s.ws}/aborted-ran-${network}`; // writable: the command would make it if it ran
    const base = req(s, ['sh', '-c', `touch ${marker}`]);
    const r = await sb.run({ ...base, policy: { ...base.policy, network }, signal: AbortSignal.abort() });
    expect(r.signal).toBe('SIGKILL');
    await new Promise((done) => setTimeout(done, 300)); // what is left would have run by now
    expect(existsSync(marker)).toBe(false);
    expect(processesMentioning(marker)).toEqual([]);
  });

  it('has a private /tmp, its own /proc and a minimal /dev', async () => {
    const r = await sb.run(req(s, ['sh', '-c', 'echo hi > /tmp/private-probe && ls /tmp && cat /proc/1/comm && ls /dev | wc -l']));
    expect(r.stdout.split('\n').slice(0, 2)).toEqual(['private-probe', 'bwrap']);
    expect(Number(r.stdout.split('\n')[2])).toBeLessThan(20);
    expect(existsSync('/tmp/private-probe')).toBe(false);
  });

  it.each([
    ['sh', ['sh', '-c', 'echo x > /usr/aalis-denied'], '/usr/aalis-denied'],
    ['python', ['python3', '-c', "open('/etc/aalis-denied','w')"], '/etc/aalis-denied'],
    ['node', ['node', '-e', "require('fs').writeFileSync('/etc/aalis-denied','x')"], '/etc/aalis-denied'],
    ['relative path', ['sh', '-c', 'mkdir -p .git/hooks && echo x > .git/hooks/pre-push'], '.git/hooks/pre-push'],
  ] as const)('detects a refused write from %s and names the path', async (_, argv, path) => {
    const r = await sb.run(req(s, [...argv] as [string, ...string[]]));
    expect(r.exitCode).not.toBe(0);
    expect(r.writeDenied).toBe(true);
    expect(r.deniedWrites).toEqual([path.startsWith('/') ? path : `${s.ws}/${path}`]);
    expect(existsSync(path.startsWith('/') ? path : `${s.ws}/${path}`)).toBe(false);
  });

  it('does not call a plain failure a refused write', async () => {
    const r = await sb.run(req(s, ['sh', '-c', 'cat /nonexistent; ls /nope; exit 2']));
    expect(r.exitCode).toBe(2);
    expect(r.writeDenied).toBe(false);
    expect(r.deniedWrites).toEqual([]);
  });

  it('writes where the policy allows, and the write is on the host', async () => {
    const r = await sb.run(req(s, ['sh', '-c', 'echo made > src/made.txt']));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(`${s.ws}/src/made.txt`, 'utf8')).toBe('made\n');
  });

  it('undoes new landings and secret files anywhere under a writable root, and reports them as refused writes', async () => {
    const script = [
      'mkdir -p deep/er/.vscode deep/.husky',
      'echo x > deep/er/.envrc',
      "echo '{}' > deep/er/.vscode/tasks.json",
      'echo x > deep/.husky/pre-commit',
      'echo S=1 > deep/er/.env.production',
      'echo fine > deep/er/ok.txt',
    ].join(' && ');
    const undone = `${s.root}/undone`;
    const r = await createLinuxSandbox({ undoneDir: undone, hostModel: 'look' }).run(req(s, ['sh', '-c', script]));
    expect(r.exitCode).toBe(0);
    expect(r.writeDenied).toBe(true);
    for (const rel of ['deep/er/.envrc', 'deep/er/.vscode', 'deep/.husky', 'deep/er/.env.production']) {
      expect(existsSync(`${s.ws}/${rel}`), rel).toBe(false);
      expect(r.deniedWrites).toContain(`${s.ws}/${rel}`);
    }
    // moved out of the way, not deleted: a host program may have made one of them during the run
    const [run] = readdirSync(undone);
    // each entry is data on the result; stderr keeps one summary line, not the paths
    expect([...(r.movedAside ?? [])].sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual(
      ['deep/.husky', 'deep/er/.env.production', 'deep/er/.envrc', 'deep/er/.vscode'].map((rel) => ({ path: `${s.ws}/${rel}`, to: `${undone}/${run}${s.ws}/${rel}`, reason: 'moved-aside' })),
    );
    expect(r.stderr).toContain("4 entries this command wrote were moved aside or removed by the sandbox (the result's movedAside names each)");
    expect(r.stderr).not.toContain(undone);
    expect(readFileSync(`${undone}/${run}${s.ws}/deep/er/.vscode/tasks.json`, 'utf8')).toBe('{}\n');
    expect(readFileSync(`${undone}/${run}${s.ws}/deep/er/.env.production`, 'utf8')).toBe('S=1\n');
    expect(readFileSync(`${s.ws}/deep/er/ok.txt`, 'utf8')).toBe('fine\n');
    // What existed before the run is never touched by the sweep.
    expect(readFileSync(`${s.ws}/.env`, 'utf8')).toBe('SECRET=1\n');
  });

  it('honours an approved write grant and an approved landing path', async () => {
    const outside = `${s.root}/approved`;
    const base = req(s, ['sh', '-c', `mkdir -p ${outside} && echo g > ${outside}/f && echo l >> ${s.home}/.bashrc`]);
    const first = await sb.run(base);
    expect(first.writeDenied).toBe(true);
    const policy = { ...base.policy, write: [...base.policy.write, outside], writeExceptions: [...base.policy.writeExceptions, { path: `${s.home}/.bashrc` }] };
    const second = await sb.run({ ...base, policy });
    expect(second.exitCode).toBe(0);
    expect(readFileSync(`${outside}/f`, 'utf8')).toBe('g\n');
    expect(readFileSync(`${s.home}/.bashrc`, 'utf8')).toContain('l\n');
  });
});

/** The look-based model: its placeholders refuse the known names while the command runs (the overlay makes none). */
const look = createLinuxSandbox({ hostModel: 'look' });

describe('new files the policy denies, inside a writable root', { timeout: 120_000 }, () => {
  it.each([
    ['a new .env.local', 'echo S=1 > .env.local', '.env.local'],
    ['a new .envrc', 'echo x > .envrc', '.envrc'],
    ['a new .vscode directory', 'mkdir .vscode', '.vscode'],
    ['a new .vscode/tasks.json', 'mkdir -p .vscode; echo {} > .vscode/tasks.json', '.vscode'],
    ['a new AGENTS.md', 'echo x > AGENTS.md', 'AGENTS.md'],
  ].flatMap(([what, cmd, name]) => (['look', 'overlay'] as const).map((model) => [what!, model, cmd!, name!] as const)))('refuses %s (%s model) and reports it as a refused write', async (_, model, cmd, name) => {
    const r = await (model === 'look' ? look : sb).run(req(s, ['sh', '-c', cmd]));
    // the look's placeholder refuses it at once; the overlay lets it into the upper layer and the commit refuses it
    if (model === 'look') expect(r.exitCode).not.toBe(0);
    else expect(r.exitCode).toBe(0);
    expect(r.writeDenied).toBe(true);
    expect(r.deniedWrites.some((p) => p === `${s.ws}/${name}` || p.startsWith(`${s.ws}/${name}/`))).toBe(true);
    expect(existsSync(`${s.ws}/${name}`)).toBe(false); // and the placeholder is gone afterwards
  });

  it('leaves git nothing to commit: `git add -A` in the sandbox sees no placeholder', async () => {
    const git = 'git -c user.email=a@example.invalid -c user.name=a';
    // what the workspace really holds, as git on the host sees it (the hidden .env among it)
    const onHost = execFileSync('git', ['-C', s.ws, 'ls-files', '--others', '--cached'], { encoding: 'utf8' }).trim().split('\n').sort();
    const r = await sb.run(req(s, ['sh', '-c', `${git} add -A && ${git} commit -qm x && git show --name-only --format= HEAD`]));
    expect(r.exitCode).toBe(0);
    expect(onHost).toContain('src/a.txt');
    expect(r.stdout.trim().split('\n').sort()).toEqual(onHost);
  });

  it('removes a landing made deeper in the tree while the command still runs, not only at its end', async () => {
    const watched = createLinuxSandbox({ landingSweepMs: 100, hostModel: 'look' }); // the look while it runs (overlay.test.ts: nothing lands at all)
    const cmd = 'mkdir -p deep/.vscode && echo {} > deep/.vscode/tasks.json; for i in $(seq 1 600); do [ -e deep/.vscode ] || break; sleep 0.1; done; [ -e deep/.vscode ] && echo still there || echo removed';
    const r = await watched.run(req(s, ['sh', '-c', cmd]));
    expect(r.stdout.trim()).toBe('removed');
    expect(r.writeDenied).toBe(true);
    expect(r.deniedWrites).toContain(`${s.ws}/deep/.vscode`);
    // the placeholders of the run are never taken for landings: they held while it ran
    const held = await watched.run(req(s, ['sh', '-c', 'sleep 0.5; mkdir .claude 2>&1; test -d .claude && echo pinned']));
    expect(held.stdout).toContain('File exists');
    expect(existsSync(`${s.ws}/.claude`)).toBe(false);
  });

  it('keeps a placeholder two runs share until the last of them ends (look model)', async () => {
    // The first runs until the second has made its share of the placeholders; the second writes
    // only once the first has ended. Gates, not sleeps: a loaded machine outlasted 150 ms.
    const firstMayEnd = gate(s);
    const secondMayWrite = gate(s);
    const first = look.run(req(s, ['sh', '-c', `exec sh -c "${firstMayEnd.wait}" first-of-two`]));
    await untilProcess('first-of-two'); // it has made its placeholders and is running
    const cmd = `${secondMayWrite.wait}; echo x > .claude/settings.json; test -f .claude/settings.json && echo written || echo refused`;
    const secondRun = look.run(req(s, ['sh', '-c', `exec sh -c "${cmd}" second-of-two`]));
    await untilProcess('second-of-two');
    firstMayEnd.open();
    const firstDone = await first;
    secondMayWrite.open();
    const second = await secondRun;
    expect(firstDone.exitCode).toBe(0);
    expect(second.stdout).toContain('refused');
    expect(second.stderr).toContain('Read-only file system');
    expect(second.writeDenied).toBe(true);
    expect(existsSync(`${s.ws}/.claude`)).toBe(false);
  });
});

/** Pids of live processes whose command line names `text` (a sandbox left waiting would). */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('placeholders that cannot be made', { timeout: 60_000 }, () => {
  let t: Scene;
  beforeAll(() => {
    t = makeScene();
  });
  afterAll(() => t.cleanup());

  it('a dangling symlink at a landing name is no reason to refuse the run: its target is judged instead', async () => {
    symlinkSync(`${t.root}/outside-target`, `${t.ws}/.envrc`);
    const r = await sb.run(req(t, ['sh', '-c', 'echo ran; echo x > .envrc']));
    expect(r.stdout).toBe('ran\n');
    expect(r.writeDenied).toBe(true); // the target is outside every writable root
    expect(existsSync(`${t.root}/outside-target`)).toBe(false);
    rmSync(`${t.ws}/.envrc`);
  });

  // A write root on a read-only mount: the placeholders fail while bwrap waits before its first
  // mount, so the run fails closed and the command never starts. Mounting needs root.
  it.skipIf(process.getuid?.() !== 0)('fails closed, with nothing run and nothing left, when a placeholder cannot be made (look model)', async () => {
    const ro = `${t.root}/ro-ws`;
    mkdirSync(ro);
    execFileSync('mount', ['--bind', ro, ro]);
    try {
      execFileSync('mount', ['-o', 'remount,ro,bind', ro, ro]);
      const marker = `${t.sessionTmp}/ran`; // writable: the command would make it if it ran
      const policy = { ...req(t, ['true']).policy, write: [ro, t.sessionTmp], unixSockets: [ro] };
      // this daemon's run folders only: other test files' sandboxes come and go in /tmp meanwhile
      const before = readdirSync('/tmp').filter((n) => n.startsWith(`aalis-sbx-${process.pid}-`));
      await expect(look.run({ ...req(t, ['sh', '-c', `touch ${marker}`]), cwd: ro, policy })).rejects.toThrow(/placeholders could not be made.*nothing was run/);
      expect(existsSync(marker)).toBe(false);
      expect(readdirSync(ro)).toEqual([]);
      // none new (earlier overlay runs' folders may go meanwhile: their removal is not waited for)
      expect(readdirSync('/tmp').filter((n) => n.startsWith(`aalis-sbx-${process.pid}-`) && !before.includes(n))).toEqual([]);
      expect(processesMentioning(marker)).toEqual([]); // the sandbox waiting in its setup was killed too
    } finally {
      execFileSync('umount', [ro]);
    }
  });
});
