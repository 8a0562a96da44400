import { rmSync } from 'node:fs';
import type { SandboxPolicy } from '@aalis/api-reach';
import { layersOf } from './layers.js';
import { isWithin } from './rule-match.js';
import { type FoundEntry, findPatternMatches, type HostFacts, type ScanOptions } from './scan.js';

/** What the look after a run found: the entries it removed, and whether it could look at all. */
export interface UndoReport {
  readonly removed: readonly string[];
  /** Set when the roots could not be walked again (the limit): nothing was removed then. */
  readonly skipped?: string;
}

/**
 * Mounts can only protect what exists when the sandbox starts, and the placeholders only the
 * names on the command's own path. A new entry elsewhere under a writable root that a deny layer
 * covers (a `.envrc` or `.vscode/tasks.json` in a subdirectory, a `.env` the tool layer never
 * writes) is found by walking the same roots again after the run and removed, and reported as a
 * refused write: undone, not prevented, which the README says plainly.
 */
export function undoNewForbidden(policy: SandboxPolicy, before: HostFacts, options: ScanOptions | undefined): UndoReport {
  const layers = layersOf(policy);
  const existed = new Set<string>([...before.kinds.keys()]);
  for (const f of before.found) existed.add(f.via ?? f.path);
  let after: { found: readonly FoundEntry[] };
  try {
    after = findPatternMatches(policy, options);
  } catch (e) {
    return { removed: [], skipped: (e as Error).message };
  }
  const removed: string[] = [];
  const entries = after.found.map((f) => f.via ?? f.path).sort();
  for (const path of entries) {
    if (existed.has(path) || removed.some((r) => isWithin(path, r))) continue;
    if (!policy.write.some((root) => isWithin(path, root)) || layers.writable(path)) continue;
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  return { removed };
}
