import { readdirSync, readFileSync } from 'node:fs';

/** A process as /proc shows it: its id and its start time (to tell a reused id apart). */
export interface ProcessRef {
  readonly pid: number;
  readonly start: string;
}

function stat(pid: number): { ppid: number; session: number; start: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself hold spaces or parentheses.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(fields[1]);
    const session = Number(fields[3]);
    const start = fields[19];
    return Number.isFinite(ppid) && start !== undefined ? { ppid, session, start } : undefined;
  } catch {
    return undefined;
  }
}

const SANDBOX_TOOLS = new Set(['bwrap', 'slirp4netns', 'sandbox-exec']);

function programOf(pid: number): string {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return argv0.slice(argv0.lastIndexOf('/') + 1);
  } catch {
    return '';
  }
}

/**
 * The live descendants of `root` that run commands, with everything under them (Linux `/proc`;
 * empty elsewhere): sandboxes (bubblewrap, slirp4netns) and host commands, which are started in
 * a session of their own. The daemon's other children (a compiler service) are left be.
 */
export function commandDescendantsOf(root: number = process.pid): ProcessRef[] {
  const own = stat(root)?.session;
  return descendantsOf(root, (pid) => SANDBOX_TOOLS.has(programOf(pid)) || (own !== undefined && stat(pid)?.session !== own));
}

/** Every live descendant of `root`, or only the subtrees whose top process passes `top`. */
export function descendantsOf(root: number = process.pid, top: (pid: number) => boolean = () => true): ProcessRef[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, ProcessRef[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const info = stat(pid);
    if (!info) continue;
    const list = children.get(info.ppid) ?? [];
    list.push({ pid, start: info.start });
    children.set(info.ppid, list);
  }
  const found: ProcessRef[] = [];
  const queue = (children.get(root) ?? []).map((ref) => ({ ref, inside: false }));
  while (queue.length > 0) {
    const { ref, inside } = queue.shift() as { ref: ProcessRef; inside: boolean };
    const keep = inside || top(ref.pid);
    if (keep) found.push(ref);
    queue.push(...(children.get(ref.pid) ?? []).map((child) => ({ ref: child, inside: keep })));
  }
  return found;
}

/**
 * SIGKILLs the processes of a snapshot that still run (same id, same start time). The daemon
 * takes the snapshot before it aborts its calls: a sandbox whose monitor is killed can leave its
 * inner process reparented away from the daemon, out of reach of a later look.
 */
export function killSurvivors(snapshot: readonly ProcessRef[]): number {
  let killed = 0;
  for (const ref of snapshot) {
    if (stat(ref.pid)?.start !== ref.start) continue;
    try {
      process.kill(ref.pid, 'SIGKILL');
      killed++;
    } catch {
      // it ended meanwhile
    }
  }
  return killed;
}

/**
 * Live bubblewrap processes whose arguments name a path under `dataDir`: every sandbox this
 * daemon started binds its session temp from there. A monitor killed early can leave its
 * sandbox reparented to init, out of the daemon's process tree; this finds it all the same.
 */
export function sandboxesUnder(dataDir: string): ProcessRef[] {
  const prefix = `${dataDir.replace(/\/+$/, '')}/`;
  const found: ProcessRef[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!argv[0]?.endsWith('bwrap') || !argv.some((a) => a.startsWith(prefix))) continue;
      const info = stat(Number(entry));
      if (info) found.push({ pid: Number(entry), start: info.start });
    } catch {
      // it ended meanwhile
    }
  }
  return found;
}
