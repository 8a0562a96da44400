import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScanLimitError, scanHost, scanRoots } from './scan.js';
import { makeScene, type Scene, workspacePolicy } from './scene.testing.js';

let s: Scene;
beforeAll(() => {
  s = makeScene();
  for (const d of ['a/b/.env.d', 'node_modules/pkg', 'link-target']) mkdirSync(join(s.ws, d), { recursive: true });
  writeFileSync(join(s.ws, 'a/b/.env'), 'X=1');
  writeFileSync(join(s.ws, 'a/b/.env.d/inner'), 'X=1');
  writeFileSync(join(s.ws, 'node_modules/pkg/.env'), 'X=1');
  writeFileSync(join(s.ws, 'link-target/real.txt'), 'X=1');
  symlinkSync(join(s.ws, 'link-target/real.txt'), join(s.ws, 'a/.env.link'));
  symlinkSync(join(s.ws, 'nowhere'), join(s.ws, 'a/.env.dangling'));
  mkdirSync(join(s.home, '.npm'), { recursive: true });
  writeFileSync(join(s.home, '.npm', '.env'), 'X=1');
});
afterAll(() => s.cleanup());

describe('scanHost', () => {
  it('finds pattern matches at any depth, node_modules included, does not descend into hidden directories, follows matching symlinks to their target', () => {
    const facts = scanHost(workspacePolicy(s), s.ws);
    const found = facts.found.map((f) => f.path);
    expect(found).toContain(join(s.ws, 'a/b/.env'));
    expect(found).toContain(join(s.ws, 'a/b/.env.d'));
    expect(found).not.toContain(join(s.ws, 'a/b/.env.d/inner')); // hidden whole, not descended
    expect(found).toContain(join(s.ws, 'node_modules/pkg/.env'));
    expect(facts.found.find((f) => f.via === join(s.ws, 'a/.env.link'))?.path).toBe(join(s.ws, 'link-target/real.txt'));
    expect(found.some((p) => p.includes('dangling'))).toBe(false);
    expect(facts.kinds.get(s.ws)).toBe('dir');
  });

  it('walks toolchain caches (the sandbox\'s own cache home) only to the home depth', () => {
    const cache = join(s.home, '.cache', 'aalis-sandbox');
    mkdirSync(join(cache, 'a/b/c/d'), { recursive: true });
    writeFileSync(join(cache, 'a/b/c/d/.env'), 'X=1');
    writeFileSync(join(cache, 'a/.env'), 'X=1'); // level 4 under the home
    writeFileSync(join(cache, '.env'), 'X=1');
    const policy = workspacePolicy(s, { write: [s.ws, cache] });
    expect(scanRoots(policy)).not.toContain(cache);
    const found = scanHost(policy, s.ws, { home: s.home }).found.map((f) => f.path);
    expect(found).toContain(join(cache, '.env'));
    expect(found).toContain(join(cache, 'a/.env'));
    expect(found).not.toContain(join(cache, 'a/b/c/d/.env'));
  });

  it('stops at the entry limit', () => {
    expect(() => scanHost(workspacePolicy(s), s.ws, { maxEntries: 5 })).toThrow(ScanLimitError);
  });
});
