import type { SandboxPolicy } from '@aalis/api-reach';
import { childOf, type PathState, type PolicyEvaluator, PROBE_CHILD, policyEvaluatorOf } from './policy-evaluator.js';
import { placeholderBases, placeholderCandidates } from './placeholders.js';
import { isWithin } from './rule-match.js';
import { type KernelPath, kernelSurfaceArgs } from './kernel-surface.js';
import type { EntryKind, HostFacts } from './scan.js';
import { AalisError } from '@aalis/core';
import type { LinuxErrorCode } from './linux-error-codes.js';

/** An empty directory the runner creates for one run, mounted read-only, and removes afterwards. */
export interface Placeholder {
  readonly path: string;
}

/** One mount the translation decided on, in bwrap order. */
export interface PlannedMount {
  readonly path: string;
  readonly state: PathState | 'private-tmp';
  readonly kind: EntryKind;
  readonly why: 'base' | 'root' | 'rule' | 'found' | 'socket' | 'socket-home' | 'keep' | 'placeholder' | 'tmp';
}

/** The bubblewrap mount arguments for one policy, and what the runner must prepare for them. */
export interface Translation {
  readonly args: readonly string[];
  readonly mounts: readonly PlannedMount[];
  readonly placeholders: readonly Placeholder[];
  /** Whether `args` refer to `emptyFile` (`emptyDir` they refer to when there are placeholders). */
  readonly usesEmptyFile: boolean;
  /** What `/tmp` is inside: see {@link TmpPlan}. */
  readonly tmp: TmpPlan;
  /** What the run should say on stderr: host sockets it could not hide, and why. */
  readonly notes: readonly string[];
}

/**
 * What `/tmp` is inside the sandbox. `session`: the policy's session temp bound there (it
 * survives the command, on the host at `path`). `private`: an empty tmpfs, gone after the
 * command, with `reason` saying why (no session temp in the policy, or a root the policy names
 * lies under the host's `/tmp`, and bwrap would have to make its mount point in the session temp
 * on the host). `host`: the policy names `/tmp` or `/` itself, which decides.
 */
export type TmpPlan =
  | { readonly kind: 'session'; readonly path: string }
  | { readonly kind: 'private'; readonly reason: string }
  | { readonly kind: 'host' };

/** Inputs besides the policy. */
export interface TranslateOptions {
  readonly cwd: string;
  /** An empty regular file on the host, mounted read-only over hidden files and sockets. */
  readonly emptyFile: string;
  /** An empty directory on the host, mounted read-only at each placeholder. Default `<emptyFile>.dir`. */
  readonly emptyDir?: string;
  /** The kernel files made read-only or masked (`kernelSurface()` of kernel-surface.ts); default none. */
  readonly kernel?: readonly KernelPath[];
  /**
   * Whether missing denied names get placeholders (default true: the look-based model). False
   * under the overlay model, where every writable root is an overlay and a new entry there is
   * judged at the commit: a placeholder would only add a mount and a host-side directory per name,
   * and refused writes kept for an answer must reach the upper layer (kept-writes.ts).
   */
  readonly placeholders?: boolean;
}

/** Policy paths that cannot be expressed as mounts are refused rather than dropped. */
export class UntranslatableError extends AalisError<LinuxErrorCode> {
  override readonly name = 'UntranslatableError';
  constructor(message: string) {
    super('untranslatable', message);
  }
}

const RESTRICTIVENESS: Record<PathState, number> = { rw: 0, ro: 1, hidden: 2 };
const stricter = (a: PathState, b: PathState): PathState => (RESTRICTIVENESS[a] >= RESTRICTIVENESS[b] ? a : b);
const KERNEL_FS = ['/proc', '/dev'];
/** Never writable, whatever the policy says: sysfs writes go to the host kernel. */
const READ_ONLY_FS = '/sys';

interface Node {
  path: string;
  kind: EntryKind;
  why: PlannedMount['why'];
  forced?: PathState;
}

function checkPaths(policy: SandboxPolicy, cwd: string): void {
  const all = [...policy.write, ...policy.readAllowWithin, ...policy.unixSockets, cwd, ...(policy.tmp === undefined ? [] : [policy.tmp])];
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
  const evaluator = policyEvaluatorOf(policy);
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
    const forced = f.hide ? 'hidden' : f.via ? stricter(evaluator.entry(f.via), evaluator.entry(f.path)) : undefined;
    add(forced ? { path: f.path, kind: f.kind, why: 'found', forced } : { path: f.path, kind: f.kind, why: 'found' });
  }
  const sockets = hideSockets(policy, facts, named);
  for (const n of sockets.nodes) add(n);
  const placeholders: Placeholder[] = [];
  // denied `{ path }` rules count too, but only in the directories the name list covers
  const bases = options.placeholders === false ? [] : placeholderBases(policy, options.cwd);
  const deniedMissing =
    options.placeholders === false
      ? []
      : [
          ...placeholderCandidates(policy, options.cwd),
          ...[...policy.writeDeny, ...policy.controlDeny].flatMap((r) =>
            'path' in r && bases.some((b) => isWithin(r.path, b) && r.path.split('/').length - b.split('/').length <= 2) ? [r.path] : [],
          ),
        ];
  const dangling = new Set(facts.dangling ?? []);
  for (const p of options.placeholders === false ? [] : new Set(deniedMissing)) {
    // a dangling symlink leads where its target's own state decides
    if (facts.kinds.has(p) || dangling.has(p) || p === '/') continue;
    const parent = p.slice(0, p.lastIndexOf('/')) || '/';
    if (facts.kinds.get(parent) !== 'dir' || evaluator.hidden(parent)) continue;
    // only where the process could otherwise create it, and the policy says it must not
    if (!evaluator.writable(childOf(parent, PROBE_CHILD)) || evaluator.writable(p)) continue;
    placeholders.push({ path: p });
    add({ path: p, kind: 'dir', why: 'placeholder', forced: 'ro' });
  }

  const rootContents = evaluator.contents('/', true);
  const args: string[] = [rootContents === 'rw' ? '--bind' : '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev'];
  const kernel = kernelSurfaceArgs(options.kernel ?? [], options.emptyFile, rootContents === 'rw');
  args.push(...kernel.args);
  const mounts: PlannedMount[] = [{ path: '/', state: rootContents, kind: 'dir', why: 'base' }];
  const tmp = tmpPlanOf(policy, named, evaluator);
  const privateTmp = tmp.kind !== 'host';
  const remountRo: string[] = [...kernel.remountRo];
  let usesEmptyFile = kernel.usesEmptyFile;
  const emptyDir = options.emptyDir ?? `${options.emptyFile}.dir`;
  type Frame = { path: string; contents: PathState | 'private-tmp' };
  const stack: Frame[] = [{ path: '/', contents: rootContents }];
  if (privateTmp) nodes.set('/tmp', { path: '/tmp', kind: 'dir', why: 'tmp' });
  const sorted = [...nodes.values()].filter((n) => n.path !== '/').sort((a, b) => (a.path < b.path ? -1 : 1));
  for (const n of sorted) {
    while (!isWithin(n.path, stack[stack.length - 1]!.path)) stack.pop();
    const parent = stack[stack.length - 1]!;
    if (n.why === 'socket-home') {
      // hidden whole; its top-level symlinks (not sockets, and followed to wherever they lead) are made again
      args.push('--tmpfs', n.path);
      remountRo.push(n.path);
      for (const [name, target] of sockets.symlinks.get(n.path) ?? []) args.push('--symlink', target, `${n.path}/${name}`);
      mounts.push({ path: n.path, state: 'hidden', kind: 'dir', why: n.why });
      stack.push({ path: n.path, contents: 'hidden' });
      continue;
    }
    if (n.why === 'tmp') {
      if (tmp.kind === 'session') {
        const state = evaluator.contents(tmp.path, true);
        args.push(state === 'rw' ? '--bind' : '--ro-bind', tmp.path, '/tmp');
      } else args.push('--tmpfs', '/tmp');
      mounts.push({ path: '/tmp', state: 'private-tmp', kind: 'dir', why: 'tmp' });
      stack.push({ path: '/tmp', contents: 'private-tmp' });
      continue;
    }
    if (parent.contents === 'private-tmp' && !named.some((r) => isWithin(n.path, r))) continue;
    const isDir = n.kind === 'dir';
    const cap = (st: PathState): PathState => (isWithin(n.path, READ_ONLY_FS) ? stricter(st, 'ro') : st);
    const entry = cap(n.forced ?? evaluator.entry(n.path));
    const contents = cap(n.forced ?? evaluator.contents(n.path, isDir));
    const under = parent.contents === 'private-tmp' ? 'hidden' : parent.contents;
    const needed = n.why === 'root' || n.why === 'placeholder' || contents !== under || entry !== under;
    if (!needed) continue;
    // what the session temp holds is also at /tmp: the same mounts there
    const dests = tmp.kind === 'session' && n.path !== tmp.path && isWithin(n.path, tmp.path) ? [n.path, `/tmp${n.path.slice(tmp.path.length)}`] : [n.path];
    for (const dest of dests) {
      if (contents === 'hidden') {
        if (isDir) {
          args.push('--tmpfs', dest);
          remountRo.push(dest);
        } else {
          args.push('--ro-bind', options.emptyFile, dest);
          usesEmptyFile = true;
        }
      } else if (n.why === 'placeholder') {
        // the source must exist when bwrap starts; the placeholder itself is made while it starts
        args.push('--ro-bind', emptyDir, dest);
      } else {
        args.push(contents === 'rw' ? '--bind' : '--ro-bind', n.path, dest);
      }
    }
    mounts.push({ path: n.path, state: contents, kind: n.kind, why: n.why });
    if (isDir) stack.push({ path: n.path, contents });
  }
  for (const p of remountRo) args.push('--remount-ro', p);
  return { args, mounts, placeholders, usesEmptyFile, tmp, notes: sockets.notes };
}

/**
 * The mounts that keep host sockets out of reach unless under `unixSockets` (host-sockets.ts
 * says how they are found): each socket home a read-only tmpfs, with the resolver files bound
 * back into it; each socket found at its name the empty file; the directory of each socket no
 * longer at its name a tmpfs, unless the policy needs something in it (then, like a socket that
 * cannot be placed, it is said on stderr).
 */
function hideSockets(policy: SandboxPolicy, facts: HostFacts, named: readonly string[]): { nodes: Node[]; symlinks: Map<string, readonly (readonly [string, string])[]>; notes: string[] } {
  const allowed = (p: string) => policy.unixSockets.some((d) => isWithin(p, d));
  const nodes: Node[] = [];
  const symlinks = new Map<string, readonly (readonly [string, string])[]>();
  const notes: string[] = [];
  const homes = (facts.socketHomes ?? []).filter((h) => !allowed(h.path));
  for (const h of homes) {
    nodes.push({ path: h.path, kind: 'dir', why: 'socket-home', forced: 'hidden' });
    symlinks.set(h.path, h.symlinks);
  }
  for (const k of facts.keepReadable ?? []) if (homes.some((h) => isWithin(k, h.path))) nodes.push({ path: k, kind: 'file', why: 'keep', forced: 'ro' });
  for (const f of facts.sockets) if (!allowed(f)) nodes.push({ path: f, kind: 'file', why: 'socket', forced: 'hidden' });
  // a directory's tmpfs must not cover anything another node would put back
  const inUse = [...named, ...facts.kinds.keys(), ...facts.found.map((f) => f.path), ...(facts.keepReadable ?? [])];
  for (const d of facts.socketDirs ?? []) {
    const hostTmp = named.some((p) => p === '/tmp' || p === '/');
    if (allowed(d) || homes.some((h) => isWithin(d, h.path)) || (isWithin(d, '/tmp') && !hostTmp)) continue; // allowed, or not there already
    const needed = inUse.find((p) => isWithin(p, d));
    if (needed === undefined) nodes.push({ path: d, kind: 'dir', why: 'socket', forced: 'hidden' });
    else notes.push(`aalis: a host socket was moved or renamed after it was bound in ${d}; that directory is not hidden (the policy needs ${needed}), so the socket may be reachable\n`);
  }
  for (const u of facts.unplacedSockets ?? []) notes.push(`aalis: a host socket could not be located, so it is not hidden: ${u}\n`);
  return { nodes, symlinks, notes };
}

/**
 * Where `/tmp` comes from (see {@link TmpPlan}). A session temp the layers hide is a policy that
 * contradicts itself: refused.
 */
function tmpPlanOf(policy: SandboxPolicy, named: readonly string[], evaluator: PolicyEvaluator): TmpPlan {
  if (named.some((p) => p === '/tmp' || p === '/')) return { kind: 'host' };
  if (policy.tmp === undefined) return { kind: 'private', reason: 'the policy names no session temp' };
  if (evaluator.contents(policy.tmp, true) === 'hidden') throw new UntranslatableError(`the session temp "${policy.tmp}" is hidden by the policy's own read rules`);
  // a root under the host's /tmp needs a mount point inside /tmp: bwrap would make it in the session temp, on the host
  const under = named.find((p) => isWithin(p, '/tmp'));
  if (under !== undefined) return { kind: 'private', reason: `"${under}" lies under the host's /tmp` };
  return { kind: 'session', path: policy.tmp };
}
