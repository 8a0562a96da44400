import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { SandboxUnavailableError } from '@aalis/api-reach';
import { afterAll, describe, expect, it } from 'vitest';
import { containersLabelled, engineSkip, TEST_IMAGE, tempDir, until } from '../test/engine.js';
import { DockerDeployment } from './docker-deployment.js';
import { LABELS } from './labels.js';

describe.skipIf(engineSkip)('the docker deployment with two users', async () => {
  const deployment = engineSkip ? undefined : await DockerDeployment.start({ dataRoot: tempDir('aalis-deploy-'), images: { stdio: TEST_IMAGE }, instance: 'test-deploy' });
  afterAll(async () => {
    await deployment?.stop();
  });

  it("gives each user their own data directory; neither sees the other's files", async () => {
    const alice = await deployment!.user('alice');
    const bob = await deployment!.user('bob');
    expect(alice.dataDir).not.toBe(bob.dataDir);
    const write = await alice.sandbox.run({ argv: ['sh', '-c', 'echo alice-secret > notes.txt'], cwd: alice.workspace, env: {}, timeoutMs: 20_000, policy: alice.policy('workspace') });
    expect(write.exitCode).toBe(0);
    expect(readFileSync(join(alice.workspace, 'notes.txt'), 'utf8')).toBe('alice-secret\n');

    const peek = await bob.sandbox.run({
      argv: ['sh', '-c', `cat ${alice.workspace}/notes.txt; ls ${alice.dataDir}; echo end`],
      cwd: bob.workspace,
      env: {},
      timeoutMs: 20_000,
      policy: bob.policy('workspace'),
    });
    expect(peek.stdout).toBe('end\n');
    expect(peek.stderr).toMatch(/No such file or directory/);
    // Asking for the other user's workspace in the policy is refused, and nothing runs.
    await expect(
      bob.sandbox.run({ argv: ['cat', `${alice.workspace}/notes.txt`], cwd: bob.workspace, env: {}, timeoutMs: 20_000, policy: { ...bob.policy('workspace'), write: [alice.workspace] } }),
    ).rejects.toThrow(SandboxUnavailableError);
  });

  it("runs each user's commands in their own containers; neither sees the other's processes", async () => {
    const alice = await deployment!.user('alice');
    const bob = await deployment!.user('bob');
    const long = alice.sandbox.run({ argv: ['sleep', '4'], cwd: alice.workspace, env: {}, timeoutMs: 20_000, policy: alice.policy('readonly') });
    await until(() => containersLabelled(`${LABELS.user}=alice`).length === 1);
    expect(containersLabelled(`${LABELS.user}=bob`)).toEqual([]);
    const ps = await bob.sandbox.run({ argv: ['ps', '-o', 'pid,user,args'], cwd: bob.workspace, env: {}, timeoutMs: 20_000, policy: bob.policy('readonly') });
    expect(ps.exitCode).toBe(0);
    expect(ps.stdout).not.toMatch(/sleep/);
    // The header, the engine's init, the deadline's watcher and ps itself: nothing of alice's.
    const others = ps.stdout.trim().split('\n').slice(1).filter((line) => !/docker-init -- timeout|timeout -s KILL \d+ ps|\bps -o pid/.test(line));
    expect(others).toEqual([]);
    expect((await long).exitCode).toBe(0);
    expect(await deployment!.containers()).toEqual([]);
  });

  it('runs the read-only tier as uid 10001: the kernel refuses writes to the workspace, the temp is writable', async () => {
    const alice = await deployment!.user('alice');
    const result = await alice.sandbox.run({
      argv: ['sh', '-c', `id -u; echo x > ${alice.workspace}/ro.txt; echo y > ${alice.tmp}/scratch && echo tmp-ok`],
      cwd: alice.workspace,
      env: {},
      timeoutMs: 20_000,
      policy: alice.policy('readonly'),
    });
    expect(result.stdout).toBe('10001\ntmp-ok\n');
    expect(result.stderr).toMatch(/Read-only file system/);
    expect(result.writeDenied).toBe(true);
    expect(existsSync(join(alice.workspace, 'ro.txt'))).toBe(false);
    expect(readFileSync(join(alice.tmp, 'scratch'), 'utf8')).toBe('y\n');
  });

  it("runs the deployment's commands as the user whose space holds the directory, with that user's own HOME and caches", async () => {
    const alice = await deployment!.user('alice');
    const bob = await deployment!.user('bob');
    const write = await deployment!.sandbox.run({
      argv: ['sh', '-c', 'echo "$HOME"; echo alice-cache > "$HOME/.cache/x"'],
      cwd: alice.workspace,
      env: { HOME: '/root' }, // the daemon's HOME, as reach passes it: never the one a user gets
      timeoutMs: 20_000,
      policy: alice.policy('workspace'),
    });
    expect(write.stdout).toBe(`${alice.home}\n`);
    expect(readFileSync(join(alice.home, '.cache', 'x'), 'utf8')).toBe('alice-cache\n');
    const peek = await deployment!.sandbox.run({
      argv: ['sh', '-c', `cat "$HOME/.cache/x" ${alice.home}/.cache/x; echo end`],
      cwd: bob.workspace,
      env: {},
      timeoutMs: 20_000,
      policy: bob.policy('workspace'),
    });
    expect(peek.stdout).toBe('end\n');
    // A directory in nobody's space (the deployment's root itself) is refused, and nothing runs.
    await expect(deployment!.sandbox.run({ argv: ['true'], cwd: deployment!.dataRoot, env: {}, timeoutMs: 20_000, policy: bob.policy('workspace') })).rejects.toThrow(
      /in no user's space/,
    );
    // A symlink in bob's workspace into alice's: the real directory is alice's, bob's policy is not.
    symlinkSync(alice.workspace, join(bob.workspace, 'to-alice'));
    await expect(
      deployment!.sandbox.run({ argv: ['cat', 'notes.txt'], cwd: join(bob.workspace, 'to-alice'), env: {}, timeoutMs: 20_000, policy: bob.policy('workspace') }),
    ).rejects.toThrow(/outside this user's data directory/);
    // A policy naming another user's cache from one's own directory is refused too.
    await expect(
      deployment!.sandbox.run({ argv: ['true'], cwd: bob.workspace, env: {}, timeoutMs: 20_000, policy: { ...bob.policy('workspace'), write: [bob.workspace, ...alice.caches] } }),
    ).rejects.toThrow(SandboxUnavailableError);
  });

  it("lets the read-only tier (uid 10001) write the session temp the daemon made, and never follows a swapped name", async () => {
    const alice = await deployment!.user('alice');
    const session = join(alice.tmp, 'session-made-by-the-daemon');
    mkdirSync(session, { mode: 0o700 });
    const readonly = { ...alice.policy('readonly'), write: [session], readAllowWithin: [session] };
    const result = await deployment!.sandbox.run({ argv: ['sh', '-c', `id -u; echo x > ${session}/y && echo tmp-ok`], cwd: alice.workspace, env: {}, timeoutMs: 20_000, policy: readonly });
    expect(result.stdout).toBe('10001\ntmp-ok\n');
    // The name swapped for a symlink (the user's temp is writable from their containers).
    const swapped = join(alice.tmp, 'session-swapped');
    symlinkSync(alice.workspace, swapped);
    const before = statSync(alice.workspace).mode;
    await expect(
      deployment!.sandbox.run({ argv: ['true'], cwd: alice.workspace, env: {}, timeoutMs: 20_000, policy: { ...readonly, write: [swapped], readAllowWithin: [swapped] } }),
    ).rejects.toThrow(/not a plain directory/);
    expect(statSync(alice.workspace).mode).toBe(before);
  });

  it('refuses a user id that is not a safe name', async () => {
    await expect(deployment!.user('../bob')).rejects.toThrow(/not usable in the docker deployment/);
  });
});

describe.skipIf(engineSkip)('starting the docker deployment', () => {
  it('fails closed when the engine does not answer', async () => {
    await expect(
      DockerDeployment.start({ dataRoot: tempDir(), images: { stdio: TEST_IMAGE }, instance: 'test-deploy-down', client: { env: { DOCKER_HOST: 'unix:///nonexistent.sock' } } }),
    ).rejects.toThrow(/the docker deployment cannot start: engine/);
  });
});
