import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MissingParentError, NotOwnDirError, ownDir } from './own-dir.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-own-dir-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const isRoot = process.geteuid?.() === 0;
const NOBODY = 65534;
const hasSetfacl = spawnSync('setfacl', ['--version'], { stdio: 'ignore' }).status === 0;

let n = 0;
/** A fresh folder under the test's root, made by `make` (which returns the path to judge). */
function scene(make: (base: string) => string): string {
  const base = join(root, `case-${n++}`);
  mkdirSync(base, { mode: 0o755 });
  return make(base);
}
const judge = (path: string) => () => ownDir(path, 'the data directory', '--data DIR');
/** Makes `name` in `base` (with `mode` set by chmod, past the umask) and returns its path. */
function dir(base: string, name: string, mode?: number): string {
  const path = join(base, name);
  mkdirSync(path, { recursive: true });
  if (mode !== undefined) chmodSync(path, mode);
  return path;
}

describe('ownDir: a data directory is this user\'s own, or nothing is read or written in it', () => {
  it('makes a missing one, with its parents, 0700', () => {
    const path = join(root, 'new', 'deep', 'data');
    expect(ownDir(path, 'the data directory', '--data DIR')).toBe(path);
    expect(statSync(path).mode & 0o777).toBe(0o700);
  });

  it.each([
    ['one of its own, 0755', (b: string) => dir(b, 'd', 0o755)],
    ['one reached through a symlink (judged at its real path)', (b: string) => {
      symlinkSync(dir(b, 'real'), join(b, 'link'));
      return join(b, 'link');
    }],
    ['one in a world-writable parent with the sticky bit (/tmp)', (b: string) => dir(dir(b, 'tmp', 0o1777), 'd')],
  ])('takes %s', (_what, make) => {
    const path = scene(make);
    expect(judge(path)()).toBe(path);
  });

  it.each([
    ['writable by others', (b: string) => dir(b, 'd', 0o777), /is writable by its group or by others \(mode 777;/],
    ['in a parent others may write, without the sticky bit', (b: string) => dir(dir(b, 'open', 0o777), 'd', 0o700), /lies in .*\/open, where others may rename or replace entries \(mode 777, no sticky bit\)/],
    ['a regular file', (b: string) => {
      writeFileSync(join(b, 'f'), '');
      return join(b, 'f');
    }, /is not a directory/],
  ])('refuses one %s', (_what, make, message) => {
    const path = scene(make);
    expect(judge(path)).toThrow(NotOwnDirError);
    expect(judge(path)).toThrow(message);
  });

  it.skipIf(!isRoot)('refuses one another user made first, and one of its group shared with others (as root: chown)', () => {
    const theirs = scene((b) => {
      const d = dir(b, 'd', 0o700);
      chownSync(d, NOBODY, NOBODY);
      return d;
    });
    expect(judge(theirs)).toThrow(/belongs to uid 65534, not to this user \(uid 0\)/);
    // through a symlink of this user's: still somebody else's directory
    const link = join(root, `link-${n++}`);
    symlinkSync(theirs, link);
    expect(judge(link)).toThrow(NotOwnDirError);
    // group-writable, the group nogroup: not this user's private group
    const grouped = scene((b) => {
      const d = dir(b, 'd', 0o770);
      chownSync(d, 0, NOBODY);
      return d;
    });
    expect(judge(grouped)).toThrow(/writable by its group or by others \(mode 770;/);
  });

  it('refuses a path through a symlink in a directory others may write (whoever may replace the link chooses where it leads)', () => {
    const good = scene((b) => dir(b, 'good', 0o700));
    const open = scene((b) => dir(b, 'open', 0o777));
    symlinkSync(good, join(open, 'd'));
    expect(judge(join(open, 'd'))).toThrow(/lies in .*\/open, where others may rename or replace entries/);
    // the same directory named directly is taken
    expect(judge(good)()).toBe(good);
  });

  it('takes a path through a symlink of its own or root\'s (a symlinked home: Silverblue, a dotfile manager), whatever the link\'s mode bits say', () => {
    const real = scene((b) => dir(b, 'var-home', 0o755));
    const link = join(root, `homelink-${n++}`);
    symlinkSync(real, link);
    expect(judge(join(link, 'data'))()).toBe(join(link, 'data'));
  });

  it.skipIf(!isRoot)('refuses a path through a symlink another user owns: its owner may point it elsewhere', () => {
    const target = scene((b) => dir(b, 'rootdata', 0o700));
    const team = scene((b) => dir(b, 'team', 0o1777));
    const link = join(team, 'd');
    symlinkSync(target, link);
    lchownSync(link, NOBODY, NOBODY);
    expect(judge(link)).toThrow(/is reached through the symlink .*\/team\/d, which belongs to uid 65534/);
    expect(judge(join(link, 'sub'))).toThrow(/which belongs to uid 65534/);
  });

  it('judges the directories above before it makes the missing ones: a refusal leaves nothing behind', () => {
    const open = scene((b) => dir(b, 'open', 0o777));
    expect(judge(join(open, 'new', 'data'))).toThrow(NotOwnDirError);
    expect(existsSync(join(open, 'new'))).toBe(false);
  });

  it("named by hand ('leaf'), it is made only where its parent is: a typo makes nothing", () => {
    const parent = join(root, `typo-${n++}`);
    expect(() => ownDir(join(parent, 'x'), 'the data directory', '--data DIR', 'leaf')).toThrow(MissingParentError);
    expect(() => ownDir(join(parent, 'x'), 'the data directory', '--data DIR', 'leaf')).toThrow(/its parent .* is not there \(a typo\?\); nothing was made/);
    expect(existsSync(parent)).toBe(false);
    mkdirSync(parent);
    expect(ownDir(join(parent, 'x'), 'the data directory', '--data DIR', 'leaf')).toBe(join(parent, 'x'));
    expect(statSync(join(parent, 'x')).mode & 0o777).toBe(0o700);
  });

  it('without create, a missing directory is returned as it is, and nothing is made', () => {
    const missing = join(root, `missing-${n++}`, 'data');
    expect(ownDir(missing, 'the data directory', '--data DIR', false)).toBe(missing);
    expect(existsSync(missing)).toBe(false);
  });

  it.skipIf(!isRoot || !hasSetfacl)('refuses one another user may write through an ACL (the grant shows in the group bits)', () => {
    const acl = scene((b) => dir(b, 'd', 0o700));
    execFileSync('setfacl', ['-m', 'u:nobody:rwx', acl]);
    expect(judge(acl)).toThrow(/is writable by its group or by others \(mode 770;/);
  });

  it('says what to do, and the error carries a stable code', () => {
    const path = scene((b) => dir(b, 'd', 0o777));
    try {
      judge(path)();
      expect.unreachable();
    } catch (error) {
      expect((error as NotOwnDirError).code).toBe('dir-not-own');
      expect((error as NotOwnDirError).fix).toContain(`chmod go-w ${path}`);
      expect((error as NotOwnDirError).fix).toContain('--data DIR');
    }
  });
});
