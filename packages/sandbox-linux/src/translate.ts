import type { SandboxPolicy } from '@aalis/api-reach';
import { childOf, layersOf, PROBE_CHILD, type PathState } from './layers.js';
import { placeholderBases, placeholderCandidates } from './new-entries.js';
import { isWithin } from './rule-match.js';
import { groupSockets } from './socket-groups.js';
import type { EntryKind, HostFacts } from './scan.js';

/** An empty directory the runner creates for one run, mounted read-only, and removes afterwards. */
export interface Placeholder {
  readonly path: string;
}

/** One mount the translation decided on, in bwrap order. */
export interface PlannedMount {
  readonly path: string;
  readonly state: PathState | 'private-tmp';
  readonly kind: EntryKind;
  readonly why: 'base' | 'root' | 'rule' | 'found' | 'socket' | 'placeholder' | 'tmp';
}

/** The bubblewrap mount arguments for one policy, and what the runner must prepare for them. */
export interface Translation {
  readonly args: readonly string[];
  readonly mounts: readonly PlannedMount[];
  readonly placeholders: readonly Placeholder[];
  /** Whether `args` refer to `emptyFile` (`emptyDir` they refer to when there are placeholders). */
  readonly usesEmptyFile: boolean;
}

/** Inputs besides the policy. */
export interface TranslateOptions {
  readonly cwd: string;
  /** An empty regular file on the host, mounted read-only over hidden files and sockets. */
  readonly emptyFile: string;
  /** An empty directory on the host, mounted read-only at each placeholder. Default `<emptyFile>.dir`. */
  readonly emptyDir?: string;
}

/** Policy paths that cannot be expressed as mounts are refused rather than dropped. */
export class UntranslatableError extends Error {
  override readonly name = 'UntranslatableError';
}

const RESTRICTIVENESS: Record<PathState, number> = { rw: 0, ro: 1, hidden: 2 };
const stricter = (a: PathState, b: PathState): PathState => (RESTRICTIVENESS[a] >= RESTRICTIVENESS[b] ? a : b);
const KERNEL_FS = ['/proc', '/dev'];

interface Node {
  path: string;
  kind: EntryKind;
  why: PlannedMount['why'];
  forced?: PathState;
}

function checkPaths(policy: SandboxPolicy, cwd: string): void {
  const all = [...policy.write, ...policy.readAllowWithin, ...policy.unixSockets, cwd];
  for (const p of all) {
    if (!p.startsWith('/') || p.split('/').some((s) => s === '..' || s === '.') || (p !== '/' && p.endsWith('/'))) {
      throw new UntranslatableError(`"${p}" is not an absolute, normalised real path`);
    }
  }
}

/**
 * Translates a policy into bubblewrap mount arguments (pure: host facts come from `scanHost`).
 * Every path gets the state the policy's layers give it; mounts are emitted parents first, and a
 * path is mounted only where its state differs from the mount it sits under, or where its own
 * entry must be pinned (a mount point cannot be renamed, removed or replaced from inside).
 */
export function translatePolicy(policy: SandboxPolicy, facts: HostFacts, options: TranslateOptions): Translation {
  checkPaths(policy, options.cwd);
  const layers = layersOf(policy);
  const nodes = new Map<string, Node>();
  const add = (n: Node): void => {
    if (KERNEL_FS.some((k) => isWithin(n.path, k))) return;
    const prev = nodes.get(n.path);
    if (!prev) nodes.set(n.path, n);
    else if (n.forced) prev.forced = prev.forced ? stricter(prev.forced, n.forced) : n.forced;
  };
  const named = [...policy.write, ...policy.readAllowWithin, ...policy.unixSockets, options.cwd];
  for (const p of named) {
    const k = facts.kinds.get(p);
    if (k) add({ path: p, kind: k, why: 'root' });
  }
  for (const [p, k] of facts.kinds) add({ path: p, kind: k, why: 'rule' });
  for (const f of facts.found) {
    const forced = f.hide ? 'hidden' : f.via ? stricter(layers.entry(f.via), layers.entry(f.path)) : undefined;
    add(forced ? { path: f.path, kind: f.kind, why: 'found', forced } : { path: f.path, kind: f.kind, why: 'found' });
  }
  const toHide = facts.sockets.filter((s) => !policy.unixSockets.some((d) => isWithin(s, d)));
  // a group's tmpfs must not cover anything another node would put back
  const inUse = [...named, ...facts.kinds.keys(), ...facts.found.map((f) => f.path)];
  const sockets = groupSockets(toHide, inUse, facts.keepReadable ?? []);
  for (const d of sockets.dirs) add({ path: d, kind: 'dir', why: 'socket', forced: 'hidden' });
  for (const f of sockets.files) add({ path: f, kind: 'file', why: 'socket', forced: 'hidden' });
  const placeholders: Placeholder[] = [];
  // denied `{ path }` rules count too, but only in the directories the name list covers
  const bases = placeholderBases(policy, options.cwd);
  const deniedMissing = [
    ...placeholderCandidates(policy, options.cwd),
    ...[...policy.writeDeny, ...policy.controlDeny].flatMap((r) =>
      'path' in r && bases.some((b) => isWithin(r.path, b) && r.path.split('/').length - b.split('/').length <= 2) ? [r.path] : [],
    ),
  ];
  const dangling = new Set(facts.dangling ?? []);
  for (const p of new Set(deniedMissing)) {
    // a dangling symlink leads where its target's own state decides
    if (facts.kinds.has(p) || dangling.has(p) || p === '/') continue;
    const parent = p.slice(0, p.lastIndexOf('/')) || '/';
    if (facts.kinds.get(parent) !== 'dir' || layers.hidden(parent)) continue;
    // only where the process could otherwise create it, and the policy says it must not
    if (!layers.writable(childOf(parent, PROBE_CHILD)) || layers.writable(p)) continue;
    placeholders.push({ path: p });
    add({ path: p, kind: 'dir', why: 'placeholder', forced: 'ro' });
  }

  const rootContents = layers.contents('/', true);
  const args: string[] = [rootContents === 'rw' ? '--bind' : '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev'];
  const mounts: PlannedMount[] = [{ path: '/', state: rootContents, kind: 'dir', why: 'base' }];
  const privateTmp = !named.some((p) => p === '/tmp' || p === '/');
  const remountRo: string[] = [];
  let usesEmptyFile = false;
  const emptyDir = options.emptyDir ?? `${options.emptyFile}.dir`;
  type Frame = { path: string; contents: PathState | 'private-tmp' };
  const stack: Frame[] = [{ path: '/', contents: rootContents }];
  if (privateTmp) nodes.set('/tmp', { path: '/tmp', kind: 'dir', why: 'tmp' });
  const sorted = [...nodes.values()].filter((n) => n.path !== '/').sort((a, b) => (a.path < b.path ? -1 : 1));
  for (const n of sorted) {
    while (!isWithin(n.path, stack[stack.length - 1]!.path)) stack.pop();
    const parent = stack[stack.length - 1]!;
    if (n.why === 'tmp') {
      args.push('--tmpfs', '/tmp');
      mounts.push({ path: '/tmp', state: 'private-tmp', kind: 'dir', why: 'tmp' });
      stack.push({ path: '/tmp', contents: 'private-tmp' });
      continue;
    }
    if (parent.contents === 'private-tmp' && !named.some((r) => isWithin(n.path, r))) continue;
    const isDir = n.kind === 'dir';
    const entry = n.forced ?? layers.entry(n.path);
    const contents = n.forced ?? layers.contents(n.path, isDir);
    const under = parent.contents === 'private-tmp' ? 'hidden' : parent.contents;
    const needed = n.why === 'root' || n.why === 'placeholder' || contents !== under || entry !== under;
    if (!needed) continue;
    if (contents === 'hidden') {
      if (isDir) {
        args.push('--tmpfs', n.path);
        remountRo.push(n.path);
      } else {
        args.push('--ro-bind', options.emptyFile, n.path);
        usesEmptyFile = true;
      }
    } else if (n.why === 'placeholder') {
      // the source must exist when bwrap starts; the placeholder itself is made while it starts
      args.push('--ro-bind', emptyDir, n.path);
    } else {
      args.push(contents === 'rw' ? '--bind' : '--ro-bind', n.path, n.path);
    }
    mounts.push({ path: n.path, state: contents, kind: n.kind, why: n.why });
    if (isDir) stack.push({ path: n.path, contents });
  }
  for (const p of remountRo) args.push('--remount-ro', p);
  return { args, mounts, placeholders, usesEmptyFile };
}
