import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { knownDaemons, registerDaemon, registryDir } from './daemon-registry.js';
import { otherInstances } from './data-dir.js';
import { TEST_SCRATCH } from '../../../test/scratch.js';

const root = mkdtempSync(join(TEST_SCRATCH, 'aalis-registry-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = { XDG_STATE_HOME: join(root, 'state'), XDG_DATA_HOME: join(root, 'share') };

describe('the daemons registry', () => {
  it('notes a running daemon, keeps its data directory after the stop without a port, and drops a data directory that is gone', async () => {
    const data = join(root, 'd1');
    const gone = join(root, 'd2');
    mkdirSync(data);
    mkdirSync(gone);
    const stop = await registerDaemon({ dataDir: data, port: 41234 }, env);
    const stopGone = await registerDaemon({ dataDir: gone, port: 41235 }, env);
    expect(knownDaemons(env)).toEqual(expect.arrayContaining([expect.objectContaining({ dataDir: data, port: 41234, running: true, pid: process.pid })]));
    await stop();
    await stopGone();
    rmSync(gone, { recursive: true });
    expect(knownDaemons(env)).toEqual([expect.objectContaining({ dataDir: data, running: false, pid: null })]);
    const entries = readdirSync(registryDir(env));
    // Replaced through core's safe file layer: one entry, its mode kept, no temp left beside it.
    expect(entries).toHaveLength(1);
    expect(statSync(join(registryDir(env), entries[0]!)).mode & 0o777).toBe(0o600);

    const own = { dataDir: join(root, 'own'), source: 'default' as const, deployment: undefined };
    const others = otherInstances(own, env);
    expect(others.otherData).toEqual(expect.arrayContaining([data, join(env.XDG_DATA_HOME, 'aalis'), registryDir(env)]));
    expect(others.ports).toEqual([]);
  });

  it('refuses a registry directory that is a symlink, and writes nothing through it', async () => {
    const state = join(root, 'state-link');
    const target = join(root, 'elsewhere');
    mkdirSync(join(state, 'aalis'), { recursive: true });
    mkdirSync(target);
    symlinkSync(target, join(state, 'aalis', 'daemons'));
    await expect(registerDaemon({ dataDir: root, port: 41236 }, { XDG_STATE_HOME: state })).rejects.toThrow(/not a directory of this user/);
    expect(readdirSync(target)).toEqual([]);
    expect(existsSync(join(state, 'aalis', 'daemons'))).toBe(true);
  });

  it.each([
    ['not JSON', '{'],
    ['a relative data directory', JSON.stringify({ v: 1, dataDir: 'data', pid: 1, port: 1, startedAt: '' })],
    ['a port out of range', JSON.stringify({ v: 1, dataDir: root, pid: 1, port: 70000, startedAt: '' })],
    ['another version', JSON.stringify({ v: 2, dataDir: root, pid: 1, port: 1, startedAt: '' })],
  ])('skips an entry that is %s', (_name, text) => {
    const own = { XDG_STATE_HOME: join(root, `state-${Math.random()}`) };
    mkdirSync(registryDir(own), { recursive: true });
    writeFileSync(join(registryDir(own), 'x.json'), text);
    expect(knownDaemons(own)).toEqual([]);
  });
});
