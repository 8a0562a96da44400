import { realpathSync, statSync } from 'node:fs';
import type { PlanStep, SandboxPolicy, SandboxRunRequest } from '@aalis/api-reach';
import type { RunPidLimit } from './pid-limit.js';
import type { PinnedPid } from './pinned-pid.js';
import type { RunDir } from './run-dir.js';
import type { RunOverlays } from './overlay-run.js';
import type { LinuxRunPlan } from './run-plan.js';
import type { Translation } from './translate.js';

/*
 * Sandboxes prepared ahead (service.ts `prepare`). After a run of a policy ends, the next sandbox
 * for the same policy and cwd is started in the background through the whole launch chain (run
 * folder, overlay layers, root map, bwrap's namespaces and mounts, the pid limit) with a fixed
 * command: the shim below, which waits on its stdin. A later run of that policy takes it, checks
 * that the argv a cold run would start now (same scan, same translation, the shim in place of the
 * command) is the one the prepared sandbox was started with, and only then writes the command's
 * argv, cwd and environment to the shim's stdin; the shim execs them. Any difference, any error:
 * the prepared sandbox is killed and the run goes cold.
 *
 * Why perl: argv, cwd and environment are arbitrary bytes (but NUL), which `sh -c read` cannot
 * carry, so the shim needs an interpreter that reads bytes, and its start is paid in CPU on every
 * prepared sandbox. python3 (on the host already for the root map) took about 37 ms of CPU a start
 * here (h56, load 9), the largest single part of a sequential `run_command true`'s CPU; perl (Debian's
 * perl-base, an essential package) takes less than half of that (bench/shim-start.ts), and its `exec` is the C library's
 * `execvp`, the call bwrap makes for a cold run, so the PATH search and a script without a `#!` line
 * (run by /bin/sh) are the cold run's by construction, not a copy of them. A host without a system
 * perl prepares nothing (runs go cold). The shim starts with an empty environment (bwrap's
 * `--clearenv`, launch-env.ts), so no PERL5OPT or PERL5LIB of the owner's reaches it.
 */

/** The operand after the shim's program: names the process for `ps` and for tests. */
export const SHIM_TAG = 'aalis-prepared';

/**
 * The line the shim ends its own failure with, followed by the run's token (shimPayload): only the
 * shim has read the token (from its stdin, before the exec), so a command cannot write this line,
 * and a `bwrap: ` line without it is the command's own (its exit is the result).
 */
export const SHIM_FAILED = 'aalis-shim-failed ';

/**
 * The shim: says it is ready (one byte on stdout, which the daemon drops), reads an 8-byte length
 * and that many bytes from stdin (exactly, so the rest of stdin is the command's), then does what
 * bwrap would have done for a cold run: the cwd, the environment, every signal at its default,
 * execvp. Its failures read as bwrap's own (`bwrap: ...`, exit 1), so the run's error is the cold
 * run's, and end with {@link SHIM_FAILED} and the token, which tells them from the command's. Stdin
 * closed before a whole payload: it exits 125 having run nothing. Only built-ins: a module (POSIX,
 * say) would cost its load on every start.
 */
export const SHIM_PL = String.raw`
syswrite(STDOUT, "\n");
sub rd { my $n = shift; my $b = ""; while (length($b) < $n) { sysread(STDIN, $b, $n - length($b), length($b)) or exit(125) } return $b }
my ($hi, $lo) = unpack("NN", rd(8));
my @p = split(/\0/, rd($hi * 4294967296 + $lo), -1);
my ($token, $in, $cwd, $argc) = @p[0 .. 3];
my @argv = @p[4 .. 3 + $argc];
sub fail { syswrite(STDERR, "bwrap: " . $_[0] . "\n" . '${SHIM_FAILED}' . $token . "\n"); exit(1) }
if ($in ne "1") { open(STDIN, "<", "/dev/null") or fail("Can't open /dev/null: " . $!) }
chdir($cwd) or fail("Can't chdir to " . $cwd . ": " . $!);
# perl ignores SIGFPE at its start; this puts it back, with every other one
$SIG{$_} = "DEFAULT" for keys(%SIG);
%ENV = ();
for (@p[4 + $argc .. $#p]) { next if $_ eq ""; my ($k, $v) = split(/=/, $_, 2); $ENV{$k} = $v }
exec { $argv[0] } @argv or fail("execvp " . $argv[0] . ": " . $!);
`;

/** The shim's argv, run by bwrap as the prepared sandbox's command (`perl`: findPerl's); `run`: its run folder's name, so `ps` (and a test) tells which run it is. */
export function shimArgv(perl: string, run: string): [string, ...string[]] {
  return [perl, '-e', SHIM_PL, SHIM_TAG, run];
}

/** The plan's word on it: what a prepared sandbox runs instead of the command, and when one is used. */
export function preparedStep(perl: string): PlanStep {
  return {
    step: 'prepared sandbox',
    detail: `this argv may have been started ahead with the command after "--" replaced by the shim (${perl} -e <shim> ${SHIM_TAG} <run folder>), which at release reads the command's argv, cwd and environment (those above) from its stdin and execs them; it is used only when everything else of this argv, its fds and its environment are the same at release (else a fresh sandbox is started)`,
  };
}

/** What the shim reads at release: the run's token (for {@link SHIM_FAILED}), whether stdin is the command's, the cwd, argv and environment, NUL-separated behind an 8-byte length. */
export function shimPayload(request: Pick<SandboxRunRequest, 'argv' | 'cwd' | 'stdin'>, env: Readonly<Record<string, string>>, token: string): Buffer {
  const parts = [token, request.stdin === undefined ? '0' : '1', request.cwd, String(request.argv.length), ...request.argv, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)];
  const body = Buffer.from(parts.join('\0'));
  const head = Buffer.alloc(8);
  head.writeBigUInt64BE(BigInt(body.length));
  return Buffer.concat([head, body]);
}

/** Whether `stderr` ends with the shim's own failure for `token` (then without that line), or is the command's. */
export function shimFailure(stderr: string, token: string): { readonly failed: boolean; readonly stderr: string } {
  const line = `${SHIM_FAILED}${token}\n`;
  return stderr.endsWith(line) ? { failed: true, stderr: stderr.slice(0, -line.length) } : { failed: false, stderr };
}

/** The request the prepared sandbox is started with: the shim, no environment of its own, stdin open for the payload. */
export function shimRequest<R extends SandboxRunRequest>(request: R, perl: string, run: string): R {
  return { ...request, argv: shimArgv(perl, run), env: {}, stdin: '' };
}

/** Which prepared sandbox a run may take: the same policy from the same cwd (the translation depends on both). */
export function preparedKey(policy: SandboxPolicy, cwd: string): string {
  return JSON.stringify([cwd, policy]);
}

/** A started run's handles that a prepared sandbox keeps (service.ts `Started`). */
export interface PreparedChild {
  readonly pid: number | undefined;
  killBwrap(): void;
  readonly ended: Promise<unknown>;
  dispose(): void;
}

/** A sandbox prepared ahead, its shim waiting on stdin. */
export interface PreparedSandbox<C extends PreparedChild = PreparedChild> {
  readonly key: string;
  readonly dir: RunDir;
  readonly overlays: RunOverlays;
  readonly translation: Translation;
  /** The argv, fds and environment it was started with, to compare at release. */
  readonly plan: LinuxRunPlan;
  /** {@link pathsIdentity} of its cwd and plan, taken before it started, to compare at release. */
  readonly identity: string;
  readonly child: C;
  /** The sandbox's pid (bwrap's child). */
  readonly pid: number;
  /** That pid pinned when it was read (pinned-pid.ts): what a kill by pid checks. */
  readonly pinned?: PinnedPid;
  readonly pidLimit: RunPidLimit;
  /** Set once it ended before release: it is never taken then. */
  dead: boolean;
}

/** Whether two plans start the same thing: argv, the fds' bytes, the chain's environment. */
export function samePlan(a: LinuxRunPlan, b: LinuxRunPlan): boolean {
  const x = a.plan;
  const y = b.plan;
  if (x.argv.length !== y.argv.length || x.argv.some((v, i) => v !== y.argv[i])) return false;
  if (JSON.stringify(x.env) !== JSON.stringify(y.env)) return false;
  const bytes = (p?: Uint8Array, q?: Uint8Array) => (p === undefined || q === undefined ? p === q : Buffer.from(p).equals(Buffer.from(q)));
  return bytes(a.seccomp, b.seccomp) && bytes(a.envBytes, b.envBytes) && bytes(a.argsBytes, b.argsBytes);
}

/**
 * The host paths a sandbox's start looks up: the cwd and every absolute path in the plan's
 * arguments. bwrap resolves them once, at the preparation; the overlay and the kernel's cache then
 * keep what it found, so a cwd symlink pointed elsewhere, or a directory replaced by another of the
 * same name, before the release would not be seen by the prepared sandbox though its argv is the
 * same. Their {@link pathsIdentity} is taken before the preparation starts and again at release; a
 * difference sends the run cold. Two plans that {@link samePlan} calls the same give the same paths.
 */
export function identityPaths(cwd: string, plan: LinuxRunPlan): string[] {
  const args = plan.argsBytes === undefined ? [] : Buffer.from(plan.argsBytes).toString('latin1').split('\0');
  return [...new Set([cwd, ...plan.plan.argv, ...args].filter((a) => a.startsWith('/')))];
}

/**
 * What `paths` are now: each one's real path and inode (or why it has none). Run on the host
 * thread (host-thread.ts, op `identity`), after the release's scan: through the thread pool, a hundred
 * paths were two hundred callbacks on the daemon's event loop, about 2 ms a call.
 */
export function pathsIdentity(paths: readonly string[]): string {
  const seen = paths.map((path) => {
    try {
      const st = statSync(path, { bigint: true });
      return [path, realpathSync.native(path), String(st.dev), String(st.ino)];
    } catch (error) {
      return [path, (error as NodeJS.ErrnoException).code ?? 'unreadable'];
    }
  });
  return JSON.stringify(seen);
}

/** A pool entry: the preparation for one key, and its sandbox once it is ready. */
interface Entry<C extends PreparedChild> {
  readonly key: string;
  readonly ready: Promise<PreparedSandbox<C> | undefined>;
  done?: PreparedSandbox<C>;
  timer?: NodeJS.Timeout;
}

/** How long a prepared sandbox waits for its run before it is discarded. */
export const DEFAULT_PREPARED_IDLE_MS = 30_000;
/**
 * Prepared sandboxes held or under way per policy and cwd. Two, so that a run arriving right after
 * another finds one ready while the next is still being prepared (measured: README, "Sandboxes
 * prepared ahead").
 */
export const DEFAULT_PREPARED_PER_KEY = 2;
/**
 * Most prepared sandboxes at once, over every policy: each holds a bwrap, a perl shim, a run
 * folder and a pids cgroup. Eight: four conversations used in turn keep their two each (with four,
 * the first two conversations' pairs filled the pool and the other two always ran cold).
 */
export const MAX_PREPARED = 8;

/**
 * The prepared sandboxes, at most `perKey` per key and {@link MAX_PREPARED} in all: a preparation
 * in flight counts. `take` removes one synchronously, so two runs never get the same one.
 */
export class PreparedPool<C extends PreparedChild> {
  /** Oldest first. */
  private readonly entries: Entry<C>[] = [];
  private readonly perKey: number;
  /** Discards under way (beyond the cap, idle), awaited by {@link close}. */
  private readonly dropping = new Set<Promise<void>>();

  constructor(
    private readonly idleMs: number,
    private readonly discard: (p: PreparedSandbox<C>) => Promise<void>,
    perKey: number = DEFAULT_PREPARED_PER_KEY,
  ) {
    this.perKey = Math.max(1, Math.min(MAX_PREPARED, Math.floor(perKey)));
  }

  /** How many preparations for `key` are held or under way. */
  count(key: string): number {
    return this.entries.filter((e) => e.key === key).length;
  }

  /** Whether `key` holds as many as it may (held or under way). */
  full(key: string): boolean {
    return this.count(key) >= this.perKey;
  }

  /**
   * Holds what `prepare` makes for `key`, or nothing (undefined) when `key` holds its share already
   * or the pool is full. A full pool discards nothing to make room: a place frees when its sandbox
   * is taken, fails, or has waited `idleMs` unused. (Runs of more policies in turn than the pool
   * holds, as 8 clients of 32 conversations, each with its own temp directory, discarded each
   * other's before any came back when a newer one took the oldest's place: a preparation per run
   * for nothing, 0.50x the throughput of no preparation at all.)
   */
  add(key: string, prepare: () => Promise<PreparedSandbox<C> | undefined>): Promise<void> | undefined {
    if (this.count(key) >= this.perKey || this.entries.length >= MAX_PREPARED) return undefined;
    const entry: Entry<C> = { key, ready: prepare().catch(() => undefined) };
    this.entries.push(entry);
    return entry.ready.then((p) => {
      entry.done = p;
      if (!this.entries.includes(entry)) return; // dropped meanwhile: drop() discards it
      if (!p) {
        this.remove(entry);
        return;
      }
      entry.timer = setTimeout(() => void this.drop(entry), this.idleMs);
      entry.timer.unref();
    });
  }

  /**
   * A prepared sandbox for `key` that is ready now, no longer held; undefined when none is (one
   * still being prepared stays for a later run: waiting for it costs more than a cold start, since
   * its shim's start comes on top). One that died meanwhile is discarded and the next looked at.
   */
  async take(key: string): Promise<PreparedSandbox<C> | undefined> {
    for (;;) {
      const entry = this.entries.find((e) => e.key === key && e.done !== undefined);
      const p = entry?.done;
      if (!entry || !p) return undefined;
      this.remove(entry);
      if (!p.dead) return p;
      await this.discard(p);
    }
  }

  private remove(entry: Entry<C>): void {
    const i = this.entries.indexOf(entry);
    if (i >= 0) this.entries.splice(i, 1);
    clearTimeout(entry.timer);
  }

  private drop(entry: Entry<C>): Promise<void> {
    if (!this.entries.includes(entry)) return Promise.resolve();
    this.remove(entry);
    const done = entry.ready.then((p) => (p ? this.discard(p) : undefined)).catch(() => {});
    this.dropping.add(done);
    void done.finally(() => this.dropping.delete(done));
    return done;
  }

  /** Discards every prepared sandbox, those still being prepared once they are, and waits for every discard under way. */
  async close(): Promise<void> {
    await Promise.all([...this.entries].map((e) => this.drop(e)));
    await Promise.all(this.dropping);
  }
}
