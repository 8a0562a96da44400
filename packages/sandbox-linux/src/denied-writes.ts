import { isAbsolute, resolve } from 'node:path';

/**
 * How a refused write is recognised. Every refusal this sandbox makes is a read-only mount (the
 * host behind `--ro-bind`, hidden directories remounted read-only, placeholders): the kernel
 * answers EROFS, which nothing else in the sandbox produces. A program reports it as
 * strerror(EROFS) ("Read-only file system", Python's "[Errno 30]", Node's "EROFS"); renaming onto
 * or removing a pinned mount point answers EBUSY, and a placeholder directory makes writing its
 * name fail with EISDIR and creating a directory of its name with EEXIST: those count only when
 * the path named is one the sandbox mounted (or lies under a placeholder). A non-zero exit without
 * such a report is not a refused write.
 */
const EROFS_LINE = /read-only file system|\bEROFS\b|\[Errno 30\]/i;
const MOUNT_LINE = /device or resource busy|\bEBUSY\b|\[Errno 16\]|file exists|\bEEXIST\b|\[Errno 17\]|not a directory|\bENOTDIR\b|\[Errno 20\]|is a directory|\bEISDIR\b|\[Errno 21\]/i;
const ERRNO_NAME = /^E[A-Z0-9]+$/;
const QUOTED = /['"‘“`]([^'"’”`\n]+)['"’”`]/g;
const BEFORE_ERROR = /([^\s'"‘“:][^:]*?):\s*(?:read-only file system|device or resource busy|file exists|not a directory|is a directory)/i;

/** What the stderr of a run says about refused writes. */
export interface DeniedWrites {
  readonly denied: boolean;
  /** Real-looking absolute paths named in the refusals, resolved against the cwd. */
  readonly paths: readonly string[];
}

function pathsIn(line: string, cwd: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(QUOTED)) {
    const s = m[1]!.trim();
    if (s && !s.includes(': ') && !ERRNO_NAME.test(s)) out.push(s);
  }
  if (out.length === 0) {
    const m = BEFORE_ERROR.exec(line);
    const token = m?.[1]?.trim().split(/\s+/).pop();
    if (token) out.push(token);
  }
  return out.map((p) => (isAbsolute(p) ? resolve(p) : resolve(cwd, p)));
}

/**
 * Reads refused writes out of a run's stderr. `mounted` are the paths the sandbox mounted (an
 * EBUSY, EEXIST or ENOTDIR counts only for one of them), `placeholders` those it created.
 */
export function deniedWritesOf(stderr: string, cwd: string, mounted: ReadonlySet<string>, placeholders: ReadonlySet<string> = new Set()): DeniedWrites {
  const paths = new Set<string>();
  let denied = false;
  for (const line of stderr.split('\n')) {
    if (EROFS_LINE.test(line)) {
      denied = true;
      for (const p of pathsIn(line, cwd)) paths.add(p);
    } else if (MOUNT_LINE.test(line)) {
      const hits = pathsIn(line, cwd).filter((p) => mounted.has(p) || [...mounted].some((m) => p.startsWith(`${m}/`) && placeholders.has(m)));
      if (hits.length > 0) denied = true;
      for (const p of hits) paths.add(p);
    }
  }
  return { denied, paths: [...paths] };
}
