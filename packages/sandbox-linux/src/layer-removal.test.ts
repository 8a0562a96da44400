import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';
import { OVERLAY_OPTIONS, removeKnownLayers, removeLayers } from './overlay-mount.js';
import { TEST_SCRATCH } from '../../../test/scratch.js';

/*
 * A run's layers as the kernel leaves them: each root's upper, work and lower directories, an
 * overlay mounted on them with the runs' options in a mount namespace that then ended (its work
 * directory holds the kernel's mode-000 `work`, and `volatile`'s marker under it).
 */
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function mountedLayers(count: number, unshareArgs: readonly string[] = ['-m', '--propagation', 'private'], asUser?: (argv: string[]) => string[]): string {
  const root = mkdtempSync(join(TEST_SCRATCH, 'aalis-layers-'));
  roots.push(root);
  const dir = join(root, 'overlay');
  const script: string[] = [];
  for (let i = 0; i < count; i++) {
    for (const d of ['upper', 'work', 'lower', 'mnt']) mkdirSync(join(dir, String(i), d), { recursive: true });
    const at = join(dir, String(i));
    script.push(`mount -t overlay overlay -o lowerdir=${at}/lower,upperdir=${at}/upper,workdir=${at}/work,${OVERLAY_OPTIONS} ${at}/mnt || exit 1`);
  }
  if (asUser) execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, root]);
  const argv = ['unshare', ...unshareArgs, 'sh', '-c', script.join('\n')];
  const [cmd, ...args] = asUser ? asUser(argv) : argv;
  const r = spawnSync(cmd!, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mounting the layers failed: ${r.stderr}`);
  for (let i = 0; i < count; i++) rmSync(join(dir, String(i), 'mnt'), { recursive: true });
  expect(existsSync(join(dir, '0', 'work', 'work', 'incompat', 'volatile', 'dirty'))).toBe(true);
  return dir;
}

describe("a run's layers removed by name", () => {
  it('removes layers as a run leaves them, the kernel’s mode-000 work directory and volatile marker included', () => {
    const dir = mountedLayers(3);
    expect(removeKnownLayers(dir)).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });

  it('leaves an upper layer that still holds writes to the walk, which removes it all', () => {
    const dir = mountedLayers(2);
    mkdirSync(join(dir, '1', 'upper', 'kept'));
    writeFileSync(join(dir, '1', 'upper', 'kept', 'file'), 'refused write');
    expect(removeKnownLayers(dir)).toBe(false);
    expect(existsSync(join(dir, '1', 'upper', 'kept', 'file'))).toBe(true);
    removeLayers(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it('leaves a name it does not know to the walk', () => {
    const dir = mountedLayers(1);
    writeFileSync(join(dir, 'stray'), '');
    expect(removeKnownLayers(dir)).toBe(false);
    removeLayers(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it('is false for a folder that is not there, and removeLayers is then a no-op', () => {
    const dir = join(mkdtempSync(join(TEST_SCRATCH, 'aalis-layers-')), 'overlay');
    roots.push(join(dir, '..'));
    expect(removeKnownLayers(dir)).toBe(false);
    expect(() => removeLayers(dir)).not.toThrow();
  });

  const child = fileURLToPath(new URL('./layer-removal.child.testing.ts', import.meta.url));
  it.runIf(canRunAsNobody(child))('as an ordinary user, makes the kernel’s mode-000 directories searchable first', () => {
    const dir = mountedLayers(2, ['-rm'], (argv) => asNobody(...argv));
    chownSync(join(dir, '..'), NOBODY, NOBODY);
    const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, dir);
    const out = execFileSync(cmd!, args, { encoding: 'utf8' });
    expect(out.trim()).toBe('true');
    expect(existsSync(dir)).toBe(false);
  });
});
