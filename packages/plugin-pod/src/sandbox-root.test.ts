// A sandbox root another user could change is refused, and a task's directory is made by the daemon
// alone: real directories, real owners (run as root, with `nobody`, uid 65534, as the other user).
// Found by an attack: a root in /var/tmp/x, mode 777, owned by nobody, let that user rename
// `pod-<id>` away and put their own directory in its place.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkRoot, makeTaskDirs, type RootContext } from './sandbox-root.js';
import { checkSameTaskDir } from './task-dir-fd.js';

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;
const context: RootContext = { workspaces: [], daemonDirs: [], lists: { platform: process.platform, control: [], landing: [], denyRead: [] } };
let top: string;

beforeEach(() => {
  top = mkdtempSync(join(tmpdir(), 'h86-root-'));
  chmodSync(top, 0o700);
});
afterEach(() => rmSync(top, { recursive: true, force: true }));

describe('checkRoot', () => {
  it('accepts a root only the daemon can write', async () => {
    const root = join(top, 'pod');
    mkdirSync(root, { mode: 0o700 });
    await expect(checkRoot(root, context)).resolves.toBe(root);
    // a root not made yet is judged by its parents, and made with the first task's directory
    const later = join(top, 'new', 'pod');
    await expect(checkRoot(later, context)).resolves.toBe(later);
    const dirs = await makeTaskDirs(later, undefined, 'pod-0', context);
    expect(statSync(dirs.base).isDirectory()).toBe(true);
  });

  it.runIf(asRoot)('refuses a root owned by another user, saying which rule and what to do', async () => {
    const root = join(top, 'pod');
    mkdirSync(root, { mode: 0o755 });
    chownSync(root, NOBODY, NOBODY);
    const error = await checkRoot(root, context).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'bad-sandbox-root', fix: expect.stringContaining('owned by you') });
    expect((error as Error).message).toContain('owned by another user (uid 65534)');
  });

  it('refuses a world-writable root without the sticky bit, and one under such a parent', async () => {
    const shared = join(top, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    await expect(checkRoot(shared, context)).rejects.toMatchObject({ code: 'bad-sandbox-root', fix: expect.stringContaining('chmod go-w') });
    const below = join(shared, 'pod');
    mkdirSync(below, { mode: 0o700 });
    await expect(checkRoot(below, context)).rejects.toMatchObject({ code: 'bad-sandbox-root' });
    // a sticky shared directory (like /tmp) cannot have our names renamed away by others
    chmodSync(shared, 0o1777);
    await expect(checkRoot(below, context)).resolves.toBe(below);
  });
});

describe('makeTaskDirs', () => {
  it('makes the task directory 0700 whatever the umask, and keeps its identity', async () => {
    const root = join(top, 'pod');
    mkdirSync(root, { mode: 0o700 });
    const old = process.umask(0o000);
    try {
      const dirs = await makeTaskDirs(root, 'runs', 'pod-1', context);
      const st = statSync(dirs.base);
      expect(st.mode & 0o777).toBe(0o700);
      expect(dirs.id).toEqual({ dev: st.dev, ino: st.ino });
    } finally {
      process.umask(old);
    }
  });

  it('tells a task directory replaced since it was made from the one the pod made', async () => {
    const root = join(top, 'pod');
    mkdirSync(root, { mode: 0o700 });
    const dirs = await makeTaskDirs(root, undefined, 'pod-5', context);
    expect(() => checkSameTaskDir(dirs)).not.toThrow();
    renameSync(dirs.base, join(root, 'away'));
    mkdirSync(dirs.base, { mode: 0o700 });
    expect(() => checkSameTaskDir(dirs)).toThrow(expect.objectContaining({ code: 'bad-sandbox-root' }));
    rmSync(dirs.base, { recursive: true });
    symlinkSync(join(root, 'away'), dirs.base);
    expect(() => checkSameTaskDir(dirs)).toThrow(expect.objectContaining({ code: 'bad-sandbox-root' }));
  });

  it('refuses a task directory name that already exists, rather than reusing it', async () => {
    const root = join(top, 'pod');
    mkdirSync(join(root, 'pod-2'), { recursive: true, mode: 0o700 });
    await expect(makeTaskDirs(root, undefined, 'pod-2', context)).rejects.toMatchObject({ code: 'bad-sandbox-root' });
  });

  it.runIf(asRoot)('refuses a subdirectory another user made or can write', async () => {
    const root = join(top, 'pod');
    mkdirSync(join(root, 'theirs'), { recursive: true, mode: 0o700 });
    chownSync(join(root, 'theirs'), NOBODY, NOBODY);
    await expect(makeTaskDirs(root, 'theirs', 'pod-3', context)).rejects.toMatchObject({ code: 'bad-sandbox-root' });
    mkdirSync(join(root, 'open'));
    chmodSync(join(root, 'open'), 0o777);
    await expect(makeTaskDirs(root, 'open', 'pod-4', context)).rejects.toMatchObject({ code: 'bad-sandbox-root' });
  });
});
