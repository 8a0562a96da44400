import { isWithin } from './rule-match.js';
import type { FoundEntry } from './scan.js';

/**
 * Every bind mount costs bubblewrap a re-read of the whole mount table, so a thousand hidden
 * files cost seconds at every start (1,500 ≈ 2 s here). Past this many hidden matches, they are
 * grouped (see {@link groupHidden}).
 */
export const MAX_HIDDEN_MOUNTS = 256;

const parentOf = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';

/**
 * Past `cap` hidden matches, a directory holding two or more of them directly is hidden whole
 * instead (stricter: its other files are hidden too), the deepest first, a grouped directory
 * counting as one match of its parent, until the count fits or nothing more groups. Never a
 * directory that is or holds a named path (a root, the cwd, a rule's path). Matches each alone in
 * their directory (a `.env` in each of 1,500 packages) keep their own mounts: hiding their common
 * parent (`node_modules`) would break the project.
 */
export function groupHidden(found: FoundEntry[], layers: { entry(path: string): string }, keepVisible: readonly string[], cap: number): FoundEntry[] {
  const isHidden = (f: FoundEntry) => f.hide === true || layers.entry(f.via ?? f.path) === 'hidden';
  let hidden = found.filter(isHidden);
  if (hidden.length <= cap) return found;
  const rest = found.filter((f) => !isHidden(f));
  for (;;) {
    const byParent = new Map<string, FoundEntry[]>();
    for (const f of hidden) {
      const dir = parentOf(f.path);
      if (keepVisible.some((k) => isWithin(k, dir))) continue;
      byParent.set(dir, [...(byParent.get(dir) ?? []), f]);
    }
    const groups = [...byParent].filter(([, fs]) => fs.length >= 2);
    if (groups.length === 0) break;
    const deepest = Math.max(...groups.map(([d]) => d.split('/').length));
    let count = hidden.length;
    const grouped = new Set<FoundEntry>();
    const added: FoundEntry[] = [];
    for (const [dir, fs] of groups) {
      if (count <= cap) break;
      if (dir.split('/').length !== deepest) continue;
      for (const f of fs) grouped.add(f);
      added.push({ path: dir, kind: 'dir', hide: true, via: fs[0]!.via ?? fs[0]!.path });
      count -= fs.length - 1;
    }
    hidden = [...hidden.filter((f) => !grouped.has(f)), ...added];
    if (hidden.length <= cap) break;
  }
  return [...rest, ...hidden];
}
