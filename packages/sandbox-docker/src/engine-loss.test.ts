import { existsSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { containersLabelled, engineSkip, policy, TEST_IMAGE, tempDir, until } from '../test/engine.js';
import { DockerSandbox } from './docker-sandbox.js';
import { LABELS } from './labels.js';

const engineSocket = process.env.DOCKER_HOST?.startsWith('unix://') ? process.env.DOCKER_HOST.slice(7) : '/var/run/docker.sock';

/** A TCP proxy in front of the engine's unix socket that the test can cut: DOCKER_HOST=tcp://… */
class EngineProxy {
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  port = 0;

  async listen(port = 0): Promise<void> {
    this.server = createServer((client) => {
      const engine = connect(engineSocket);
      for (const s of [client, engine]) {
        this.sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => this.sockets.delete(s));
      }
      client.pipe(engine);
      engine.pipe(client);
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', r));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  /** Cuts every open connection; with `down`, new ones are refused too. */
  async cut(down: boolean): Promise<void> {
    if (down) await new Promise((r) => this.server?.close(r));
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    await this.cut(true).catch(() => {});
  }
}

describe.skipIf(engineSkip)('a command that exits 125 itself', () => {
  it('gets its own status back, not a lost engine', async () => {
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-exit-125' });
    for (let round = 0; round < 3; round += 1) {
      const result = await box.run({ argv: ['sh', '-c', 'echo out; exit 125'], cwd: tempDir(), env: {}, timeoutMs: 20_000, policy: policy() });
      expect(result).toMatchObject({ exitCode: 125, signal: null, stdout: 'out\n' });
      expect(result.engineLost).toBeUndefined();
    }
  }, 60_000);
});

describe.skipIf(engineSkip || !existsSync(engineSocket))('a docker client that loses the engine mid-run (DOCKER_HOST over TCP, connection cut)', () => {
  let proxy: EngineProxy;
  afterEach(async () => {
    await proxy?.close();
  });

  // The command writes a denied path at once and another later; today's client answered 125
  // at the cut while the container ran on and wrote the second, which nothing undid.
  const command = ['sh', '-c', 'touch first.envrc; sleep 3; touch late.envrc; sleep 100'] as const;
  const envrcDenied = (ws: string) => policy({ write: [ws], writeDeny: [{ pattern: '^.*\\.envrc$' }] });

  it('stops the container as soon as the engine answers again, then judges its writes as after any run', async () => {
    proxy = new EngineProxy();
    await proxy.listen();
    const instance = 'test-engine-loss';
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance, client: { env: { DOCKER_HOST: `tcp://127.0.0.1:${proxy.port}`, PATH: process.env.PATH } } });
    const ws = tempDir();
    const run = box.run({ argv: [...command], cwd: ws, env: {}, timeoutMs: 60_000, policy: envrcDenied(ws) });
    await until(() => containersLabelled(`${LABELS.instance}=${instance}`, 'running').length === 1 && existsSync(join(ws, 'first.envrc')));
    await proxy.cut(false);
    const result = await run;
    expect(result.engineLost).toBe('stopped');
    expect(result.signal).toBe('SIGKILL');
    expect(result.exitCode).toBeNull();
    expect(result.stderr).toMatch(/lost the engine .* the container was stopped/);
    expect(result.deniedWrites).toContain(join(ws, 'first.envrc'));
    expect(existsSync(join(ws, 'first.envrc'))).toBe(false);
    expect(containersLabelled(`${LABELS.instance}=${instance}`)).toEqual([]);
    // Past the moment the command would have written again: nothing did.
    await new Promise((r) => setTimeout(r, 3_500));
    expect(existsSync(join(ws, 'late.envrc'))).toBe(false);
  }, 60_000);

  it('while the engine stays out of reach, waits for the container’s own deadline, then judges and says the run was unsupervised', async () => {
    proxy = new EngineProxy();
    await proxy.listen();
    const instance = 'test-engine-gone';
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance, client: { env: { DOCKER_HOST: `tcp://127.0.0.1:${proxy.port}`, PATH: process.env.PATH } } });
    const ws = tempDir();
    const started = Date.now();
    const run = box.run({ argv: [...command], cwd: ws, env: {}, timeoutMs: 2_000, policy: envrcDenied(ws) });
    await until(() => containersLabelled(`${LABELS.instance}=${instance}`, 'running').length === 1 && existsSync(join(ws, 'first.envrc')));
    await proxy.cut(true);
    const result = await run;
    // The container's own deadline is 2 s + 5 s after its start: the result comes after it.
    expect(Date.now() - started).toBeGreaterThan(7_000);
    expect(result.engineLost).toBe('unconfirmed');
    expect(result.signal).toBe('SIGKILL');
    expect(result.stderr).toMatch(/unsupervised/);
    expect(result.deniedWrites).toEqual(expect.arrayContaining([join(ws, 'first.envrc'), join(ws, 'late.envrc')]));
    expect(existsSync(join(ws, 'first.envrc'))).toBe(false);
    expect(existsSync(join(ws, 'late.envrc'))).toBe(false);
    // Straight at the engine's socket: the container is gone, by its own deadline.
    await until(() => containersLabelled(`${LABELS.instance}=${instance}`).length === 0);
  }, 60_000);
});
