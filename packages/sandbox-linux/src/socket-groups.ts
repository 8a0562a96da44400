import { isWithin } from './rule-match.js';

/** How the host's unix sockets outside `unixSockets` are hidden: whole runtime directories, and single sockets. */
export interface SocketHiding {
  /** Runtime directories hidden whole (a read-only tmpfs each). */
  readonly dirs: readonly string[];
  /** Sockets hidden one by one (the empty file mounted over each). */
  readonly files: readonly string[];
}

/** Fewer sockets than this in one runtime directory are hidden one by one. */
export const GROUP_MIN_SOCKETS = 2;

/**
 * The runtime directory a socket belongs to: `/run/<name>`, or `/run/user/<uid>` (the
 * XDG_RUNTIME_DIR of a desktop session, which holds the session bus, the keyring, gpg and ssh
 * agents, Wayland and PipeWire). Sockets elsewhere (in a home, say) have none.
 */
export function runtimeDirOf(socket: string): string | undefined {
  const parts = socket.split('/');
  if (parts[1] !== 'run') return undefined;
  const depth = parts[2] === 'user' ? 4 : 3;
  return parts.length > depth ? parts.slice(0, depth).join('/') : undefined;
}

/**
 * Every bind mount costs bubblewrap a re-read of the mount table (about 0.27 ms here, more on a
 * machine with many mounts), and a daemon's runtime directory often holds several sockets
 * (Docker's five, a desktop session's dozen). Such a directory is hidden whole with one tmpfs
 * instead, when it holds at least {@link GROUP_MIN_SOCKETS} sockets to hide and nothing the sandbox
 * must still see: no path the policy names (a `unixSockets` root, a write root, the cwd) inside
 * it, and no system file that must stay readable (the resolver configuration behind
 * `/etc/resolv.conf` lives in `/run/systemd/resolve` or `/run/NetworkManager` on many machines).
 * Pure: the caller passes real paths.
 */
export function groupSockets(sockets: readonly string[], named: readonly string[], keepReadable: readonly string[]): SocketHiding {
  const byDir = new Map<string, string[]>();
  const files: string[] = [];
  for (const s of sockets) {
    const dir = runtimeDirOf(s);
    if (dir === undefined) files.push(s);
    else byDir.set(dir, [...(byDir.get(dir) ?? []), s]);
  }
  const dirs: string[] = [];
  for (const [dir, list] of byDir) {
    const blocked =
      list.length < GROUP_MIN_SOCKETS ||
      named.some((p) => isWithin(p, dir)) ||
      keepReadable.some((p) => isWithin(p, dir));
    if (blocked) files.push(...list);
    else dirs.push(dir);
  }
  return { dirs: dirs.sort(), files: files.sort() };
}
