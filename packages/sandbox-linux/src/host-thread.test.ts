import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostThread, HostWalkError } from './host-thread.js';
import { makeScene, type Scene, workspacePolicy } from './scene.testing.js';

let s: Scene;
const thread = new HostThread();
beforeAll(() => {
  s = makeScene();
  mkdirSync(join(s.ws, 'a/b'), { recursive: true });
  writeFileSync(join(s.ws, 'a/b/.env'), 'X=1');
});
afterAll(async () => {
  await thread.close();
  s.cleanup();
});

describe('the host thread', () => {
  it('scans and looks on a worker thread, not on the caller', async () => {
    const policy = workspacePolicy(s);
    const facts = await thread.run({ op: 'scan', policy, cwd: s.ws, options: { home: s.home }, skip: [] });
    expect(facts.found.map((f) => f.path)).toContain(join(s.ws, 'a/b/.env'));
    expect(facts.kinds.get(s.ws)).toBe('dir'); // a Map survives the trip
    writeFileSync(join(s.ws, 'a/.envrc'), 'x');
    const report = await thread.run({ op: 'look', policy, before: facts, keep: [] });
    expect(report.removed).toEqual([join(s.ws, 'a/.envrc')]);
    expect((thread as unknown as { worker?: unknown }).worker).toBeDefined();
  });

  it('says what the host model holds: the listings it kept, and its heap', async () => {
    await thread.run({ op: 'scan', policy: workspacePolicy(s), cwd: s.ws, options: { home: s.home }, skip: [] });
    const m = await thread.run({ op: 'memory' });
    expect(m.keptDirectories).toBeGreaterThanOrEqual(3); // the workspace, a, a/b at least
    expect(m.heapUsed).toBeGreaterThan(0);
  });

  it('removes a run\'s overlay layers, their mode-000 work directory included, off the caller', async () => {
    const layers = join(s.root, 'layers');
    mkdirSync(join(layers, '0/work/work'), { recursive: true });
    writeFileSync(join(layers, '0/work/work/x'), '');
    chmodSync(join(layers, '0/work/work'), 0);
    await thread.run({ op: 'removeLayers', dir: layers });
    expect(existsSync(layers)).toBe(false);
  });

  it('inline, scans and looks on the calling thread and starts no worker', async () => {
    const inline = new HostThread('inline');
    const policy = workspacePolicy(s);
    const facts = await inline.run({ op: 'scan', policy, cwd: s.ws, options: { home: s.home }, skip: [] });
    expect(facts.found.map((f) => f.path)).toContain(join(s.ws, 'a/b/.env'));
    writeFileSync(join(s.ws, 'a/.envrc'), 'x');
    const report = await inline.run({ op: 'look', policy, before: facts, keep: [] });
    expect(report.removed).toContain(join(s.ws, 'a/.envrc'));
    expect((inline as unknown as { worker?: unknown }).worker).toBeUndefined();
    await inline.close();
  });

  it('hands an error of the walk back with its message, so the run fails closed', async () => {
    const job = thread.run({ op: 'scan', policy: workspacePolicy(s), cwd: s.ws, options: { home: s.home, maxEntries: 2 }, skip: [] });
    await expect(job).rejects.toBeInstanceOf(HostWalkError);
    await expect(job).rejects.toThrow(/more than 2 entries/);
  });
});
