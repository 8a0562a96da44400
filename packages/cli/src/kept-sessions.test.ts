// KeptSessions (kept-sessions.ts): which runs share a session, when a session is given no more, and
// which temps go. Real directories; the helper's runs through it are exec-helper.test.ts's.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { dropEmptySessionTmp, KeptSessions, SESSION_TEMP_IDLE_MS, type SessionShape } from './kept-sessions.js';

const root = mkdtempSync(join(TEST_SCRATCH, 'aalis-kept-sessions-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const shape: SessionShape = { cwd: '/w', tier: 'workspace', boundary: 'ask', allowWrite: ['/a', '/b'], dataDir: '/d', backend: 'linux', network: 'off' };
const env = { PATH: '/usr/bin', HOME: '/h' };

/** A temp as the reach makes them: `<base>/<2 hex>/session-…`. */
function temp(name: string, content?: string): string {
  const dir = join(root, name.slice(0, 2), `session-${name}`);
  mkdirSync(dir, { recursive: true });
  if (content !== undefined) writeFileSync(join(dir, 'left'), content);
  return dir;
}

describe('KeptSessions', () => {
  it('gives one session to one shape and environment, and another to any change of either', () => {
    const kept = new KeptSessions();
    const id = kept.idFor(shape, env);
    expect(kept.idFor({ ...shape, allowWrite: ['/b', '/a'] }, { HOME: '/h', PATH: '/usr/bin' })).toBe(id);
    const changed: SessionShape[] = [
      { ...shape, cwd: '/w/sub' },
      { ...shape, tier: 'readonly' },
      { ...shape, boundary: 'deny' },
      { ...shape, allowWrite: ['/a'] },
      { ...shape, dataDir: '/e' },
      { ...shape, backend: 'docker' },
      { ...shape, network: 'on' },
      { ...shape, network: undefined },
    ];
    const ids = [...changed.map((s) => kept.idFor(s, env)), kept.idFor(shape, { ...env, TOKEN: 'x' }), kept.idFor(shape, { PATH: '/usr/bin' })];
    expect(new Set([id, ...ids]).size).toBe(ids.length + 1);
    // another helper (its own key and seed) never gives the same name
    expect(new KeptSessions().idFor(shape, env)).not.toBe(id);
  });

  it('never gives a retired session again, and a retirement of an older one changes nothing', () => {
    const kept = new KeptSessions();
    const first = kept.idFor(shape, env);
    kept.retire(first);
    const second = kept.idFor(shape, env);
    expect(second).not.toBe(first);
    kept.retire(first);
    expect(kept.idFor(shape, env)).toBe(second);
    kept.retire(second);
    expect(new Set([first, second, kept.idFor(shape, env)]).size).toBe(3);
    // another shape is not touched
    const other = { ...shape, cwd: '/x' };
    expect(kept.idFor(other, env)).toMatch(/-0$/);
  });

  it('removes the empty temps when asked, keeps one a command left a file in, and never follows a symlink', () => {
    const kept = new KeptSessions();
    const empty = temp('a1empty');
    const full = temp('a2full', 'kept');
    const target = join(root, 'target');
    mkdirSync(target);
    const link = join(root, 'a3', 'session-a3link');
    mkdirSync(join(root, 'a3'));
    symlinkSync(target, link);
    for (const t of [empty, full, link]) kept.keep(t);
    kept.dropEmpty();
    expect(existsSync(empty)).toBe(false);
    expect(existsSync(join(root, 'a1'))).toBe(false); // its shard, empty too
    expect(readFileSync(join(full, 'left'), 'utf8')).toBe('kept');
    expect(existsSync(target)).toBe(true);
    dropEmptySessionTmp(join(root, 'gone', 'session-gone')); // nothing there: nothing to say
  });

  it('removes, as runs end, the empty temps unused for longer than a prepared sandbox waits', () => {
    const kept = new KeptSessions();
    const old = temp('b1old');
    const oldFull = temp('b2oldfull', 'kept');
    const recent = temp('b3recent');
    kept.keep(old, 0);
    kept.keep(oldFull, 0);
    kept.keep(recent, SESSION_TEMP_IDLE_MS / 2);
    // used again: its time is its last use
    kept.keep(old, SESSION_TEMP_IDLE_MS / 2);
    kept.keep(temp('b4now'), SESSION_TEMP_IDLE_MS);
    expect(existsSync(old)).toBe(true);
    expect(existsSync(oldFull)).toBe(true);
    kept.keep(temp('b4now'), SESSION_TEMP_IDLE_MS * 1.5);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(recent)).toBe(false);
    expect(readFileSync(join(oldFull, 'left'), 'utf8')).toBe('kept');
    expect(existsSync(temp('b4now'))).toBe(true);
  });
});
