import { posix } from 'node:path';
import { foldPath, type SandboxPolicy } from '@aalis/api-reach';
import { darwinPath } from './darwin-path.js';
import { policyAllowsRead, policyAllowsWrite } from './policy-verdict.js';
import { foldersAbove } from './read-carry.js';

// Seatbelt refuses with EPERM and writes nothing to the command's stderr itself; the command's
// own message is all there is without reading the unified log (slow, and racy per command).
// So: every stderr line that says "Operation not permitted" is searched for paths, and a path
// counts as a refused write when the policy lets it be read but not written: a refused read or
// a refused connection says the same words, and is left out.

const EPERM_LINE = /operation not permitted/i;
const QUOTED = /'([^'\n]+)'|"([^"\n]+)"|‘([^’\n]+)’/g;
const ABSOLUTE = /(?:^|[\s(])(\/[^\s:'",)]*)/g;
const RENAME = /rename (.+) to (.+): operation not permitted/i;
const BEFORE = /(?:^|: )([^:\n'"]+): operation not permitted/i;
const AFTER = /operation not permitted: ([^'"\n]+)$/i;
// Words that stand where a path would in some tools' messages, never a path.
const NOT_A_PATH = /^(E[A-Z]+|\[Errno \d+\].*|Error|error|fatal|warning)$/;

type Candidate = { readonly path: string; readonly renamedFrom?: true };

// The most specific shape wins: a quoted path, a rename's two ends, the text before or after
// "Operation not permitted"; bare absolute paths (cut at the first space) only when none of those
// is there, since a cut path would be reported as a refused write of its parent.
function candidates(line: string): Candidate[] {
  const quoted = [...line.matchAll(QUOTED)].map((match) => ({ path: (match[1] ?? match[2] ?? match[3])! }));
  if (quoted.length > 0) return quoted;
  const rename = RENAME.exec(line);
  if (rename !== null) return [{ path: rename[1]!, renamedFrom: true }, { path: rename[2]! }];
  const around = [BEFORE.exec(line), AFTER.exec(line)]
    .map((match) => match?.[1]?.trim())
    .filter((text): text is string => text !== undefined && text !== '' && !NOT_A_PATH.test(text));
  if (around.length > 0) return around.map((path) => ({ path }));
  return [...line.matchAll(ABSOLUTE)].map((match) => ({ path: match[1]! }));
}

// What the profile refuses to unlink besides what it refuses to write: read-denied names, the
// folders above them, and the writable roots themselves (the carry and roots layers).
function keptInPlace(policy: SandboxPolicy): (path: string) => boolean {
  const fixed = new Set(
    [...policy.write, ...policy.readDeny.flatMap((rule, index) => foldersAbove(rule, `readDeny[${index}]`))].map((p) => foldPath(darwinPath(p, 'stderr'), 'darwin')),
  );
  return (path) => fixed.has(foldPath(path, 'darwin')) || !policyAllowsRead(policy, path);
}

/**
 * The real paths a command's stderr says were refused for writing, under `policy` (for a rename
 * also its source when the profile keeps that in place: a read-denied name, a folder above one, a
 * writable root). Recognises
 * the usual shapes (`touch: /p: Operation not permitted`, `sh: line 1: /p: ...`, Node's
 * `EPERM: operation not permitted, open '/p'`, Python's `[Errno 1] ... : '/p'`); a tool that
 * reports the refusal without the path is not counted.
 */
export function deniedWritesIn(stderr: string, policy: SandboxPolicy, cwd: string): string[] {
  const denied = new Set<string>();
  let kept: ((path: string) => boolean) | undefined;
  for (const line of stderr.split('\n')) {
    if (!EPERM_LINE.test(line)) continue;
    for (const candidate of candidates(line)) {
      try {
        const path = darwinPath(posix.resolve(cwd, candidate.path), 'stderr');
        // A rename's source is a write whatever else is true of it: refused when it may not be
        // written, or must stay where it is (a read-denied name, a folder above one, a root).
        kept ??= candidate.renamedFrom ? keptInPlace(policy) : undefined;
        if (candidate.renamedFrom && (!policyAllowsWrite(policy, path) || kept!(path))) denied.add(path);
        else if (policyAllowsRead(policy, path) && !policyAllowsWrite(policy, path)) denied.add(path);
      } catch {
        // Not a path we can judge (e.g. a control character): it is not reported as a write.
      }
    }
  }
  return [...denied];
}
