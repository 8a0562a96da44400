import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, linkSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { SandboxUnavailableError } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { containersLabelled, engineSkip, gate, policy, TEST_IMAGE, tempDir, until } from '../test/engine.js';
import { type DockerRunRequest, DockerSandbox } from './docker-sandbox.js';
import { LABELS } from './labels.js';

const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-sandbox' });

function sh(script: string, extra: Partial<DockerRunRequest> = {}): DockerRunRequest {
  return { argv: ['sh', '-c', script], cwd: tempDir(), env: {}, timeoutMs: 20_000, policy: policy(), ...extra };
}

describe.skipIf(engineSkip)('DockerSandbox on a real engine: the baseline from inside', () => {
  it('even as root: no effective or bounding capabilities, and no_new_privs set', async () => {
    const asRoot = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-sandbox', owner: { uid: 0, gid: 0 } });
    const result = await asRoot.run(sh('id -u; grep -E "^(CapEff|CapBnd|CapPrm|NoNewPrivs)" /proc/self/status', { identity: 'owner' }));
    expect(result.stdout).toMatch(/^0$/m);
    expect(result.stdout).toMatch(/^CapEff:\s+0000000000000000$/m);
    expect(result.stdout).toMatch(/^CapPrm:\s+0000000000000000$/m);
    expect(result.stdout).toMatch(/^CapBnd:\s+0000000000000000$/m);
    expect(result.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
  });

  it("even as root: api-reach's syscall policy holds (no set-user-id file on the host, no new user namespace)", async () => {
    const ws = tempDir();
    const asRoot = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-sandbox', owner: { uid: 0, gid: 0 } });
    const script = 'cp /bin/sh rootsh; chmod u+s rootsh; echo chmod=$?; chmod g+s rootsh; echo sgid=$?; chmod 755 rootsh; echo plain=$?; unshare -U true 2>/dev/null; echo unshare=$?';
    const result = await asRoot.run(sh(script, { identity: 'owner', cwd: ws, policy: policy({ write: [ws] }) }));
    expect(result.stdout).toMatch(/^chmod=1$/m);
    expect(result.stdout).toMatch(/^sgid=1$/m);
    expect(result.stdout).toMatch(/^plain=0$/m);
    expect(result.stdout).not.toMatch(/^unshare=0$/m);
    expect(statSync(join(ws, 'rootsh')).mode & 0o6000).toBe(0);
    expect(statSync(join(ws, 'rootsh')).uid).toBe(0);
  });

  it('restricted: uid 10001, no capabilities, no_new_privs, a read-only root and a writable /tmp', async () => {
    const result = await box.run(sh('grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; touch /etc/x; echo ok > /tmp/t && cat /tmp/t; id -u'));
    expect(result.stdout).toMatch(/^CapEff:\s+0000000000000000$/m);
    expect(result.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(result.stderr).toMatch(/\/etc\/x: Read-only file system/);
    expect(result.stdout).toMatch(/^ok$/m);
    expect(result.stdout.trim().split('\n').at(-1)).toBe('10001');
    expect(result.writeDenied).toBe(true);
    expect(result.deniedWrites).toContain('/etc/x');
  });

  it('stops a bounded fork loop at the pids limit', async () => {
    const result = await box.run(
      sh('n=0; for i in $(seq 1 40); do sleep 5 & n=$((n+1)); done; echo started; ps | wc -l; kill $(jobs -p) 2>/dev/null; true', {
        sandboxSpec: { profile: 'stdio', pids_limit: 12 },
      }),
    );
    expect(result.stderr).toMatch(/can't fork|Resource temporarily unavailable/);
    const processes = Number(result.stdout.trim().split('\n').at(-1));
    expect(processes).toBeLessThanOrEqual(13);
  });

  it('kills an allocation past the memory limit, and lets one under it finish', async () => {
    const grow = (bytes: number) => `awk 'BEGIN { s = "x"; while (length(s) < ${bytes}) s = s s; print length(s) }'`;
    const under = await box.run(sh(grow(4 * 1024 * 1024), { sandboxSpec: { profile: 'stdio', memory: '64m' } }));
    expect(under.exitCode).toBe(0);
    const past = await box.run(sh(grow(512 * 1024 * 1024), { sandboxSpec: { profile: 'stdio', memory: '64m' } }));
    expect(past.exitCode).toBeNull();
    expect(past.signal).toBe('SIGKILL');
    expect(past.stdout).toBe('');
  });

  it('has no network but loopback unless both the profile and the policy allow it', async () => {
    const interfaces = 'ls /sys/class/net | sort | tr "\\n" " "';
    expect((await box.run(sh(interfaces, { policy: policy({ network: 'on' }) }))).stdout.trim()).toBe('lo');
    expect((await box.run(sh(interfaces, { sandboxSpec: { profile: 'network' } }))).stdout.trim()).toBe('lo');
    expect((await box.run(sh(interfaces, { sandboxSpec: { profile: 'network' }, policy: policy({ network: 'on' }) }))).stdout.trim()).toBe('eth0 lo');
    expect((await box.run(sh(interfaces, { sandboxSpec: { profile: 'builder' }, policy: policy({ network: 'on' }) }))).stdout.trim()).toBe('lo');
  });
});

describe.skipIf(engineSkip)('DockerSandbox on a real engine: the policy', () => {
  it('refuses a write as uid 10001 in the read-only tier: EACCES from the kernel, nothing written', async () => {
    const ws = tempDir();
    const tmp = tempDir();
    const result = await box.run(sh(`touch ${ws}/new; echo done`, { cwd: ws, policy: policy({ write: [tmp], readAllowWithin: [tmp] }) }));
    expect(result.stderr).toMatch(/Read-only file system|Permission denied/);
    expect(result.deniedWrites).toEqual([`${ws}/new`]);
    expect(existsSync(join(ws, 'new'))).toBe(false);
    // Writable by the policy, refused by the host's permissions (the workspace is root's, the
    // identity 10001): not the sandbox's refusal, and no grant changes it (refusal-test.ts).
    const owned = await box.run(sh(`touch ${ws}/new`, { cwd: ws, identity: 'restricted', policy: policy({ write: [ws] }) }));
    expect(owned.stderr).toMatch(new RegExp(`${ws}/new: Permission denied`));
    expect(owned).toMatchObject({ writeDenied: false, deniedWrites: [] });
    expect(existsSync(join(ws, 'new'))).toBe(false);
  });

  it('masks the unix sockets in its mounts that unixSockets does not name: a host service listening in a project is not reachable', async () => {
    const ws = tempDir();
    chmodSync(ws, 0o755); // the container's uid 10001 looks at them
    mkdirSync(join(ws, 'db'), { mode: 0o755 });
    mkdirSync(join(ws, 'allowed'), { mode: 0o755 });
    const servers = [join(ws, 'db', '.s.PGSQL.5432'), join(ws, 'allowed', 'agent.sock'), join(ws, 'top.sock')].map((path) => {
      const server = createServer(() => {});
      server.listen(path);
      return server;
    });
    try {
      await Promise.all(servers.map((srv) => new Promise((r) => srv.once('listening', r))));
      const look = 'for s in db/.s.PGSQL.5432 allowed/agent.sock top.sock; do if [ -S $s ]; then echo "$s socket"; else echo "$s masked"; fi; done';
      for (const p of [policy(), policy({ write: [ws] })]) {
        const result = await box.run(sh(look, { cwd: ws, policy: { ...p, unixSockets: [join(ws, 'allowed')] } }));
        expect(result.stdout).toBe('db/.s.PGSQL.5432 masked\nallowed/agent.sock socket\ntop.sock masked\n');
      }
    } finally {
      for (const srv of servers) srv.close();
    }
  });

  it('writes into a writable root as the owner; landings and the control plane stay read-only', async () => {
    const ws = tempDir();
    mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
    mkdirSync(join(ws, 'ctl'));
    const result = await box.run(
      sh('echo a > out.txt; echo b > .git/hooks/pre-commit; echo c > ctl/x; echo d > .envrc; cat out.txt', {
        cwd: ws,
        policy: policy({ write: [ws], writeDeny: [{ path: join(ws, '.git') }, { pattern: '.*/\\.envrc' }], controlDeny: [{ path: join(ws, 'ctl') }] }),
      }),
    );
    expect(result.stdout).toBe('a\n');
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('a\n');
    expect(existsSync(join(ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(ws, 'ctl', 'x'))).toBe(false);
    // .envrc did not exist, so no mount could stop it: the run removed it and reports it.
    expect(existsSync(join(ws, '.envrc'))).toBe(false);
    expect(result.writeDenied).toBe(true);
    expect(result.deniedWrites).toEqual(expect.arrayContaining([join(ws, '.envrc'), join(ws, '.git/hooks/pre-commit'), join(ws, 'ctl/x')]));
    expect(result.movedAside).toEqual([{ path: join(ws, '.envrc'), reason: 'deleted' }]);
    expect(result.stderr).not.toContain('.envrc:');
  });

  // The post-run check knew denied entries by path only: `mv cfg cfg2` made cfg2/.env look new,
  // and it was removed, with a nested repo's whole .git (found by an attack: every such mv lost
  // the user's files). An entry the command only moved keeps its inode, and is left where it is.
  it('a denied entry the command only moved (mv of its folder) is not removed; one it made is', async () => {
    const ws = tempDir();
    mkdirSync(join(ws, 'cfg'));
    writeFileSync(join(ws, 'cfg', '.envrc'), 'export KEEP=1\n');
    mkdirSync(join(ws, 'sub', '.git', 'hooks'), { recursive: true });
    writeFileSync(join(ws, 'sub', '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(ws, 'sub', '.git', 'hooks', 'pre-commit.sample'), '#!/bin/sh\n');
    const result = await box.run(
      sh('mv cfg cfg2 && mv sub sub2 && echo new > cfg2/made.envrc', {
        cwd: ws,
        identity: 'owner',
        policy: policy({ write: [ws], writeDeny: [{ pattern: '.*/[^/]*\\.envrc' }, { pattern: '.*/\\.git(?:/.*)?' }] }),
      }),
    );
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(readFileSync(join(ws, 'cfg2', '.envrc'), 'utf8')).toBe('export KEEP=1\n');
    expect(readFileSync(join(ws, 'sub2', '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(existsSync(join(ws, 'sub2', '.git', 'hooks', 'pre-commit.sample'))).toBe(true);
    // one it made: removed and said (a second name for one still at its old path is not excused
    // either, movedThere; the read-only mount of a denied file refuses such a link here already)
    expect(existsSync(join(ws, 'cfg2', 'made.envrc'))).toBe(false);
    expect(result.deniedWrites).toEqual([join(ws, 'cfg2', 'made.envrc')]);
    expect(result.deniedWrites).not.toContain(join(ws, 'cfg2', '.envrc'));
  });

  // Another container's landing, there when this run was planned and removed by that container's
  // own check meanwhile, then written again at the same path by this command, was kept: the plan
  // knew the paths that were there, not which files (found by an attack: 5 of 5). The test plays
  // the other container's check itself, while the command waits at a gate.
  it("a landing written again at a path where another run's landing stood when this run was planned is removed", async () => {
    const ws = tempDir();
    writeFileSync(join(ws, '.envrc'), 'echo other\n');
    mkdirSync(join(ws, 'sub', '.git', 'hooks'), { recursive: true });
    writeFileSync(join(ws, 'sub', '.git', 'hooks', 'post-checkout'), 'echo other\n');
    const go = gate();
    const run = box.run(
      sh(`touch started; ${go.wait}; echo pwned > .envrc; mkdir -p sub/.git/hooks && echo hook > sub/.git/hooks/post-checkout; true`, {
        cwd: ws,
        identity: 'owner',
        policy: policy({ write: [ws], readAllowWithin: [go.dir], writeDeny: [{ pattern: '.*/\\.envrc' }, { pattern: '.*/\\.git(?:/.*)?' }] }),
      }),
    );
    await until(() => existsSync(join(ws, 'started')));
    rmSync(join(ws, '.envrc'));
    rmSync(join(ws, 'sub'), { recursive: true });
    go.open();
    const result = await run;
    expect(existsSync(join(ws, '.envrc'))).toBe(false);
    expect(existsSync(join(ws, 'sub', '.git', 'hooks', 'post-checkout'))).toBe(false);
    expect(result.writeDenied).toBe(true);
    expect(result.deniedWrites).toEqual(expect.arrayContaining([join(ws, '.envrc')]));
  });

  it('denied files linked to each other before the run are all kept', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'a.envrc'), 'export A=1\n');
    linkSync(join(ws, 'a.envrc'), join(ws, 'b.envrc'));
    const result = await box.run(sh('true', { cwd: ws, identity: 'owner', policy: policy({ write: [ws], writeDeny: [{ pattern: '.*/[^/]*\\.envrc' }] }) }));
    expect(result.deniedWrites).toEqual([]);
    expect([existsSync(join(ws, 'a.envrc')), existsSync(join(ws, 'b.envrc'))]).toEqual([true, true]);
  });

  // The walk after the run that finds denied writes stopped at the plan's walkLimit and threw: a
  // command that wrote more entries than that left its .envrc on the host, unjudged, and the run
  // ended in an error instead of a result.
  it('a command that writes past the walk limit still has its denied writes found and removed', async () => {
    const ws = tempDir();
    const few = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-sandbox', walkLimit: 40 });
    const result = await few.run(
      sh('mkdir many && for i in $(seq 1 60); do : > many/f$i; done; echo d > .envrc; echo done', { cwd: ws, identity: 'owner', policy: policy({ write: [ws], writeDeny: [{ pattern: '.*/\\.envrc' }] }) }),
    );
    expect(result.stdout).toBe('done\n');
    expect(existsSync(join(ws, 'many', 'f60'))).toBe(true);
    expect(existsSync(join(ws, '.envrc'))).toBe(false);
    expect(result.movedAside).toEqual([{ path: join(ws, '.envrc'), reason: 'deleted' }]);
  });

  // A text walk turned a directory name that is not UTF-8 into U+FFFD, could not open that path,
  // and so never saw the .env below it: the container read it. Now the walk reads bytes, and a
  // mask the engine cannot be given (its path is not UTF-8) refuses the run before it starts.
  it('a .env under a directory whose name is not UTF-8: the run is refused, nothing read', async () => {
    const ws = tempDir();
    const odd = Buffer.concat([Buffer.from(`${ws}/`), Buffer.from([0x64, 0xff])]);
    mkdirSync(odd);
    writeFileSync(Buffer.concat([odd, Buffer.from('/.env')]), 'TOKEN=hunter2');
    const refused = await box
      .run(sh('cat */.env; echo ran > ran.txt', { cwd: ws, policy: policy({ write: [ws], readDeny: [{ pattern: '(.*/)?\\.env[^/]*' }] }) }))
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'sandbox-unavailable', message: expect.stringMatching(/d\\xff\/\.env needs its own mask.*\(rule: not-utf8\)/) });
    expect(existsSync(join(ws, 'ran.txt'))).toBe(false);
    // With nothing hidden below it, such a directory is no reason to refuse.
    rmSync(Buffer.concat([odd, Buffer.from('/.env')]));
    const ran = await box.run(sh('ls; cat */x 2>/dev/null; echo ok', { cwd: ws, policy: policy({ write: [ws], readDeny: [{ pattern: '(.*/)?\\.env[^/]*' }] }) }));
    expect(ran.stdout).toMatch(/ok/);
  });

  it('a landing a command made under a new directory whose name is not UTF-8 is found and removed by its bytes', async () => {
    const ws = tempDir();
    const result = await box.run(
      sh(`d=$(printf 'n\\376'); mkdir "$d" && echo evil > "$d/.envrc" && echo fine > "$d/ok.txt"; echo done`, {
        cwd: ws,
        policy: policy({ write: [ws], writeDeny: [{ pattern: '.*/\\.envrc' }] }),
      }),
    );
    expect(result.stdout).toBe('done\n');
    const odd = Buffer.concat([Buffer.from(`${ws}/`), Buffer.from([0x6e, 0xfe])]);
    expect(existsSync(Buffer.concat([odd, Buffer.from('/ok.txt')]))).toBe(true);
    expect(existsSync(Buffer.concat([odd, Buffer.from('/.envrc')]))).toBe(false);
    expect(result.deniedWrites).toEqual([`${ws}/n\\xfe/.envrc`]);
    expect(result.writeDenied).toBe(true);
  });

  it('hides deny-read paths: masked files read empty, masked directories are empty, other roots are absent', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, '.env'), 'TOKEN=hunter2');
    mkdirSync(join(ws, 'secrets'));
    writeFileSync(join(ws, 'secrets', 'key'), 'hunter3');
    const elsewhere = tempDir();
    writeFileSync(join(elsewhere, 'f'), 'not mounted');
    const result = await box.run(
      sh(`cat .env; ls secrets; cat ${elsewhere}/f; ls /var/run/docker.sock; echo end`, {
        cwd: ws,
        policy: policy({ readDeny: [{ pattern: '(.*/)?\\.env[^/]*' }, { path: join(ws, 'secrets') }] }),
      }),
    );
    expect(result.stdout).not.toMatch(/hunter|not mounted/);
    expect(result.stdout).toMatch(/end/);
    expect(result.stderr).toMatch(/No such file or directory/);
  });

  it('passes only allow-listed variables and the stdin envelope', async () => {
    process.env.AALIS_DAEMON_ONLY = 'daemon-secret';
    const result = await box.run({
      ...sh('env | sort; cat'),
      env: { LANG: 'C.UTF-8', TOOL_FLAG: 'on', UNLISTED: 'x' },
      sandboxSpec: { profile: 'stdio', env: ['TOOL_FLAG'] },
      stdin: '{"tool":"t","params":{}}',
    });
    expect(result.stdout).toMatch(/^LANG=C\.UTF-8$/m);
    expect(result.stdout).toMatch(/^TOOL_FLAG=on$/m);
    expect(result.stdout).not.toMatch(/UNLISTED|daemon-secret|DOCKER_/);
    expect(result.stdout.endsWith('{"tool":"t","params":{}}')).toBe(true);
  });

  it('runs the builder as the host uid:gid of its build directory, offline', async () => {
    const work = tempDir();
    chownSync(work, 4321, 4322);
    const result = await box.run(
      sh('id -u; id -g; echo built > artefact; mkdir target', { cwd: work, sandboxSpec: { profile: 'builder' }, policy: policy({ write: [work], network: 'on' }) }),
    );
    expect(result.stdout).toBe('4321\n4322\n');
    for (const name of ['artefact', 'target']) {
      const stat = statSync(join(work, name));
      expect([stat.uid, stat.gid]).toEqual([4321, 4322]);
    }
  });

  it('keeps output to maxOutputBytes and reports exit codes', async () => {
    const result = await box.run(sh('head -c 5000 /dev/zero | tr "\\0" a; exit 3', { maxOutputBytes: 100 }));
    expect(result.stdout).toBe('a'.repeat(100));
    expect(result.truncated).toBe(true);
    expect(result.exitCode).toBe(3);
  });
});

describe.skipIf(engineSkip)('DockerSandbox on a real engine: no container outlives its call', () => {
  const label = `${LABELS.instance}=test-sandbox-life`;
  const life = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-sandbox-life' });

  it('removes containers after normal runs, a timeout and an abort', async () => {
    expect(containersLabelled(label)).toEqual([]);
    await life.run(sh('true'));
    const started = Date.now();
    const timedOut = await life.run(sh('sleep 300', { timeoutMs: 1500 }));
    expect(timedOut.timedOut).toBe(true);
    expect(timedOut.signal).toBe('SIGKILL');
    // the run ended at its limit, not with the command (300 s); the margin is for a loaded engine
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(containersLabelled(label)).toEqual([]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1000);
    const aborted = await life.run(sh('sleep 30', { signal: controller.signal }));
    expect(aborted.signal).toBe('SIGKILL');
    expect(containersLabelled(label)).toEqual([]);
  });

  it("removes a timed-out run's anonymous volumes too (an image that declares a VOLUME): what the command wrote there does not stay in the engine", { timeout: 120_000 }, async () => {
    // built here from the test image, no registry: one VOLUME line
    const image = 'aalis/sandbox-test-volume:local';
    execFileSync('docker', ['build', '--quiet', '--tag', image, '-'], { input: `FROM ${TEST_IMAGE}\nVOLUME /data\n`, stdio: ['pipe', 'ignore', 'pipe'], timeout: 60_000 });
    const volumes = () => new Set(execFileSync('docker', ['volume', 'ls', '--quiet'], { encoding: 'utf8' }).split('\n').filter(Boolean));
    const before = volumes();
    const withVolume = new DockerSandbox({ images: { stdio: image }, instance: 'test-sandbox-volume' });
    const timedOut = await withVolume.run(sh('echo written > /data/x; sleep 300', { timeoutMs: 2000 }));
    expect(timedOut.timedOut).toBe(true);
    const aborted = new AbortController();
    setTimeout(() => aborted.abort(), 1500);
    await withVolume.run(sh('echo written > /data/x; sleep 300', { signal: aborted.signal }));
    expect([...volumes()].filter((v) => !before.has(v))).toEqual([]);
    expect(containersLabelled(`${LABELS.instance}=test-sandbox-volume`)).toEqual([]);
  });

  it('an abort while the run is still being prepared is not lost: no client is started, no container is left, the run ends', { timeout: 120_000 }, async () => {
    // the client through a wrapper that notes each command it is asked for
    const dir = tempDir();
    const calls = join(dir, 'calls');
    const wrapper = join(dir, 'docker');
    writeFileSync(wrapper, `#!/bin/sh\necho "$1" >> ${calls}\nexec ${JSON.stringify(realDocker())} "$@"\n`, { mode: 0o755 });
    const noted = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-sandbox-life', client: { binary: wrapper } });
    for (let i = 0; i < 5; i++) {
      const controller = new AbortController();
      // aborted before the client starts (the run first checks the engine and the image): before, the
      // abort listener came too late and the command ran to its timeout (here 600 s, past the test's limit)
      const run = noted.run(sh('exec sleep 600', { signal: controller.signal, timeoutMs: 600_000 }));
      controller.abort();
      const aborted = await run;
      expect(aborted.signal).toBe('SIGKILL');
      expect(containersLabelled(label)).toEqual([]);
    }
    // a client started and killed at once had sent its create: the engine could make the container
    // after the run's removals (a Created one, found by the next run's tests on a shared engine)
    const asked = readFileSync(calls, 'utf8').split('\n').filter(Boolean);
    expect(asked).not.toContain('run');
    expect(asked.filter((c) => c === 'rm')).toHaveLength(5);
  });

  it('an abort just after the client started leaves no container either: the client is left to end once its container is removed, not killed mid-create', { timeout: 180_000 }, async () => {
    // The client used to be killed right after the first removal: one killed 0-30 ms after its
    // spawn had sent its create, which the engine finished after both removals had found no
    // container (a Created one left, about one run in ten here). Each run is aborted 0-30 ms
    // after its `docker run` client is spawned.
    const aborting = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-sandbox-life' });
    let abortAfter: (() => void) | undefined;
    const spawn = aborting.cli.spawn.bind(aborting.cli);
    aborting.cli.spawn = (args, env) => {
      const child = spawn(args, env);
      if (args[0] === 'run') abortAfter?.();
      return child;
    };
    for (let i = 0; i < 40; i++) {
      const controller = new AbortController();
      abortAfter = () => setTimeout(() => controller.abort(), i % 31);
      const aborted = await aborting.run(sh('exec sleep 600', { signal: controller.signal, timeoutMs: 600_000 }));
      expect(aborted.signal).toBe('SIGKILL');
    }
    // a create the engine finishes late shows as a Created container a moment after the run
    await new Promise((r) => setTimeout(r, 3000));
    expect(containersLabelled(label)).toEqual([]);
  });
});

describe.skipIf(engineSkip)('DockerSandbox fails closed', () => {
  it('runs nothing when no engine answers at DOCKER_HOST', async () => {
    const down = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-down', client: { env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' } } });
    const ws = tempDir();
    const run = down.run(sh(`touch ${ws}/ran`, { cwd: ws, policy: policy({ write: [ws] }) }));
    await expect(run).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(run).rejects.toThrow(/no Docker Engine answers at unix:\/\/\/nonexistent/);
    expect(existsSync(join(ws, 'ran'))).toBe(false);
    const probe = await down.probe();
    expect(probe.available).toBe(false);
    expect(probe.checks[0]).toMatchObject({ name: 'engine', ok: false });
  });

  it('reaches the engine DOCKER_HOST names, and never mounts that socket', async () => {
    const dir = tempDir();
    symlinkSync(realpathSync('/var/run/docker.sock'), join(dir, 'engine.sock'));
    const named = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-host', client: { env: { DOCKER_HOST: `unix://${dir}/engine.sock`, PATH: process.env.PATH } } });
    expect((await named.run(sh('echo via-docker-host'))).stdout).toBe('via-docker-host\n');
    await expect(named.run(sh('true', { cwd: dir }))).rejects.toThrow(new RegExp(`holds ${dir}/engine.sock`));
    expect(containersLabelled(`${LABELS.instance}=test-host`)).toEqual([]);
  });

  it('runs nothing when a writable root was swapped for a symlink after the policy named it: its target is never mounted', async () => {
    // A pod task turned another task's work/ into a symlink to the owner's files; the container
    // was given the target as the writable root.
    const base = tempDir();
    const victim = join(base, 'victim');
    mkdirSync(victim);
    const work = join(base, 'work');
    symlinkSync(victim, work);
    const run = box.run(sh('echo escaped > escaped.txt; pwd', { cwd: work, policy: policy({ write: [work] }) }));
    await expect(run).rejects.toThrow(/the writable root .*\/work now resolves to .*\/victim/);
    expect(existsSync(join(victim, 'escaped.txt'))).toBe(false);
    // a directory above it swapped the same way
    const parent = join(base, 'parent');
    symlinkSync(base, parent);
    await expect(box.run(sh('true', { cwd: victim, policy: policy({ write: [join(parent, 'victim')] }) }))).rejects.toThrow(/moved|now resolves to/);
  });

  it('runs nothing when the image is missing, and never pulls it', async () => {
    const missing = new DockerSandbox({ images: { stdio: 'aalis/no-such-image:never' }, instance: 'test-missing' });
    const ws = tempDir();
    await expect(missing.run(sh(`touch ${ws}/ran`, { cwd: ws, policy: policy({ write: [ws] }) }))).rejects.toThrow(/image aalis\/no-such-image:never is not on the engine/);
    expect(existsSync(join(ws, 'ran'))).toBe(false);
  });

  it('refuses an invalid tool spec, a local profile without a host sandbox, and mounting the engine socket', async () => {
    await expect(box.run(sh('true', { sandboxSpec: { profile: 'stdio', read_only: false } }))).rejects.toThrow(/read_only cannot be turned off/);
    await expect(box.run(sh('true', { sandboxSpec: { profile: 'local' } }))).rejects.toThrow(/profile local runs on the host/);
    await expect(box.run(sh('true', { policy: policy({ write: ['/run'] }) }))).rejects.toThrow(/never-mount/);
  });

  it('probes a working engine for doctor', async () => {
    const probe = await box.probe();
    expect(probe).toMatchObject({ backend: 'docker', available: true });
    expect(probe.checks.map((c) => c.name)).toEqual(['engine', `image ${TEST_IMAGE}`, 'baseline']);
  });
});

/** The docker client on PATH, as a real path (the wrapper above runs it). */
function realDocker(): string {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    if (dir !== '' && existsSync(join(dir, 'docker'))) return realpathSync(join(dir, 'docker'));
  }
  throw new Error('no docker client on PATH');
}
