// The pod's sandbox root: where a task's directories may live, checked before any is made.
import { closeSync, constants, fchmodSync, fstatSync, mkdirSync, openSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, sep } from 'node:path';
import { compileRules, pathIsUnder, type ProtectedLists, preparePath } from '@aalis/api-reach';
import { makeDirs, SafeFileError } from '@aalis/core';
import { realPathOf } from '@aalis/plugin-reach';
import { PodError } from './errors.js';
import type { TaskDirs } from './task.js';

/** Whether real path `path` is `root` or below it, compared as this platform's rules compare (api-reach's `pathIsUnder`). */
export function within(path: string, root: string): boolean {
  return pathIsUnder(path, root, process.platform);
}

/** What a sandbox root is checked against. */
export interface RootContext {
  /** The workspace and project directories (real paths): never a sandbox root, nor above a task's directory. */
  readonly workspaces: readonly string[];
  /** The daemon's own directories a root may not be in: its data directory and install. */
  readonly daemonDirs: readonly string[];
  readonly lists: ProtectedLists;
}

const HOW_TO_SET =
  "Set 'sandboxRoot' in the pod's config (or `aalis pod root PATH`, or the panel's settings) to a directory of your choosing outside the workspace and the project, e.g. ~/aalis-pod.";

/**
 * Checks a configured sandbox root: set, absolute, not inside a workspace or
 * project, not in the daemon's own directories or the control plane. Returns its real path.
 */
export async function checkRoot(configured: string | undefined, context: RootContext): Promise<string> {
  if (configured === undefined || configured.trim() === '') {
    throw new PodError('no-sandbox-root', `no sandbox root is configured, so the pod refused the task; it never picks one itself. ${HOW_TO_SET}`);
  }
  if (!isAbsolute(configured)) {
    throw new PodError('bad-sandbox-root', `the sandbox root '${configured}' is not an absolute path, so the pod refused the task. ${HOW_TO_SET}`);
  }
  const root = await realPathOf(configured);
  if (root === sep) throw new PodError('bad-sandbox-root', `the sandbox root may not be '/'. ${HOW_TO_SET}`);
  for (const ws of context.workspaces) {
    if (within(root, ws)) {
      throw new PodError('root-in-workspace', `the sandbox root ${root} is inside the workspace or project ${ws}, so the pod refused the task: a task's files must not land in the workspace. ${HOW_TO_SET}`);
    }
  }
  const protectedBy = protectedPlace(root, context);
  if (protectedBy !== undefined) throw new PodError('root-in-control-plane', `the sandbox root ${root} is ${protectedBy}, so the pod refused the task. ${HOW_TO_SET}`);
  await checkNoOtherWriter(root, 'the sandbox root');
  return root;
}

/**
 * Refuses `path` when it or a directory above it could be changed by someone other than the
 * daemon's user (or root): owned by another user, or writable by its group or by everyone
 * without the sticky bit. Such a user could rename a task's directory away and put their own in
 * its place, read the task's output, and steer where the daemon writes and what it removes
 * (found by an attack: a root in /var/tmp/x, mode 777, owned by nobody). Fails closed: a
 * directory that cannot be looked at is refused too.
 */
export async function checkNoOtherWriter(path: string, what: string): Promise<void> {
  const me = process.getuid?.();
  if (me === undefined) return; // no POSIX owners here (Windows): nothing to compare
  for (let d = path; ; d = dirname(d)) {
    const info = await lstat(d).catch((error: NodeJS.ErrnoException) => {
      // not made yet (a root is made with the first task's directory, by the daemon, 0700): its parents decide
      if (error.code === 'ENOENT') return undefined;
      throw new PodError('bad-sandbox-root', `${what} ${path} cannot be checked: ${d} cannot be looked at (${error.code ?? error.message}), so the pod refused the task.`, HOW_TO_SET);
    });
    if (info === undefined) {
      if (dirname(d) === d) return;
      continue;
    }
    if (info.uid !== me && info.uid !== 0) {
      throw new PodError(
        'bad-sandbox-root',
        `${what} ${path} is refused: ${d} is owned by another user (uid ${info.uid}), who could replace a task's directory, read its output and steer where the pod writes.`,
        `Use a directory owned by you (uid ${me}) whose every parent is owned by you or root, e.g. ~/aalis-pod; or \`chown\` ${d} to yourself.`,
      );
    }
    if ((info.mode & 0o022) !== 0 && (info.mode & 0o1000) === 0) {
      throw new PodError(
        'bad-sandbox-root',
        `${what} ${path} is refused: ${d} is writable by its group or by everyone (mode ${(info.mode & 0o7777).toString(8)}) without the sticky bit, so another user could rename a task's directory away and put their own in its place.`,
        `Run \`chmod go-w ${d}\` (or add the sticky bit, \`chmod +t\`, to a shared directory), or choose a directory only you can write, e.g. ~/aalis-pod.`,
      );
    }
    if (dirname(d) === d) return;
  }
}

/**
 * Why a place may not hold a task's files, if it may not: inside the daemon's own directories, or
 * in the control plane or the deny-read list (a project's `node_modules`, its `tools/`, …).
 */
function protectedPlace(path: string, context: RootContext): string | undefined {
  for (const dir of context.daemonDirs) if (within(path, dir)) return `inside the daemon's own directory ${dir}`;
  const prepared = preparePath(path, context.lists.platform);
  if (compileRules(context.lists.control, context.lists.platform).test(prepared) || compileRules(context.lists.denyRead, context.lists.platform).test(prepared)) return 'in the control plane or the deny-read list';
  return undefined;
}

/**
 * The directories of a new task under a checked root. Where they would land is judged first (the
 * real path of the nearest existing ancestor, so a symlinked subdirectory is judged where it
 * leads); only then are they made, one at a time through core's safe file layer, which refuses a
 * symlink that appears on the way. A refused task leaves no directory anywhere.
 */
export async function makeTaskDirs(root: string, subdir: string | undefined, id: string, context: RootContext): Promise<TaskDirs> {
  const wanted = subdir === undefined ? join(root, id) : join(root, ...subdir.split('/'), id);
  const base = await realPathOf(wanted);
  if (!within(base, root) || base === root) {
    throw new PodError('bad-sandbox-root', `the task directory ${wanted} resolves to ${base}, outside the sandbox root ${root} (a symlink?); the pod refused the task and made no directory. Choose another subdirectory.`);
  }
  for (const ws of context.workspaces) {
    if (within(base, ws) || within(ws, base)) {
      throw new PodError('root-in-workspace', `the task directory ${base} overlaps the workspace ${ws}; the pod refused the task and made no directory. Choose a sandbox root or subdirectory away from it.`);
    }
  }
  // the root was judged, but a subdirectory can reach below it into what the root check refuses
  // (a root above a project: its node_modules, its tools/, the daemon's data; found by a new user's trial)
  const protectedBy = protectedPlace(base, context);
  if (protectedBy !== undefined) {
    throw new PodError('root-in-control-plane', `the task directory ${base} is ${protectedBy}; the pod refused the task and made no directory. Choose a subdirectory away from it.`);
  }
  // Inside another task's directory (its work/ is that task's code's to write), the other task's
  // code could rewrite this task's log, or swap its work/ for a link: found by an attack
  const owner = await enclosingTask(dirname(base), root);
  if (owner !== undefined) {
    throw new PodError('bad-sandbox-root', `the task directory ${base} lies inside the directory of another task (${owner}), whose code may write there; the pod refused the task and made no directory. Choose a subdirectory outside every task's directory.`);
  }
  const parent = dirname(base);
  try {
    await makeDirs(parent, { mode: 0o700 });
  } catch (error) {
    if (error instanceof SafeFileError) {
      throw new PodError('bad-sandbox-root', `the task directory ${base} changed while it was made (${error.message}); the pod refused the task. Choose another subdirectory.`);
    }
    throw error;
  }
  // everything above the task's directory must be the daemon's (or root's) alone, the subdirectory
  // included: one another user made or may write is one they can swap (found by an attack)
  await checkNoOtherWriter(parent, 'the task directory');
  const identity = makeOwnDir(base);
  const dirs: TaskDirs = { base, work: join(base, 'work'), scratch: join(base, '.pod', 'scratch'), meta: join(base, '.pod'), id: identity };
  try {
    for (const d of [dirs.work, join(dirs.scratch, 'tmp'), join(dirs.scratch, 'home'), join(dirs.scratch, 'cache')]) await makeDirs(d, { mode: 0o700 });
  } catch (error) {
    if (error instanceof SafeFileError) {
      throw new PodError('bad-sandbox-root', `the task directory ${base} changed while it was made (${error.message}); the pod refused the task. Choose another subdirectory.`);
    }
    throw error;
  }
  return dirs;
}

/**
 * Makes a task's directory itself: exclusively (a name already there, whoever made it, is
 * refused, never reused), then opened without following a symlink and checked to be a directory
 * owned by the daemon's user, set to mode 0700 whatever the umask. Returns its device and inode,
 * kept with the task so clean-up removes only this very directory.
 */
function makeOwnDir(base: string): { dev: number; ino: number } {
  try {
    mkdirSync(base, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new PodError('bad-sandbox-root', `the task directory ${base} could not be made (${code ?? (error as Error).message}${code === 'EEXIST' ? ': something is already there' : ''}); the pod refused the task.`, 'Check who writes in the sandbox root; choose a root only you can write.');
  }
  const fd = openSync(base, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const info = fstatSync(fd);
    const me = process.getuid?.();
    if (me !== undefined && info.uid !== me) {
      throw new PodError('bad-sandbox-root', `the task directory ${basename(base)} the pod just made is owned by uid ${info.uid}, not by the daemon; it was replaced, and the pod refused the task.`, 'Choose a sandbox root only you can write.');
    }
    fchmodSync(fd, 0o700);
    return { dev: info.dev, ino: info.ino };
  } finally {
    closeSync(fd);
  }
}

/** The nearest of `dir` and its ancestors below `root` that is a task's directory (it holds `.pod/`), if any. */
async function enclosingTask(dir: string, root: string): Promise<string | undefined> {
  for (let d = dir; within(d, root) && d !== root; d = dirname(d)) {
    const meta = await lstat(join(d, '.pod')).catch(() => undefined);
    if (meta?.isDirectory()) return d;
  }
  return undefined;
}
