import { inKernelTree, type RefusalTest } from '@aalis/api-reach';
import { isWithin } from './rule-match.js';

/**
 * Which refusals a stderr line reports are this sandbox's (api-reach's `refusedWritesIn` reads
 * the lines). Every refusal it makes is a read-only mount (the host behind `--ro-bind`, hidden
 * directories remounted read-only, placeholders), so the kernel answers EROFS, which nothing else
 * in the sandbox produces: every EROFS counts, with its path or without one. Renaming onto or
 * removing a pinned mount point answers EBUSY, and a placeholder directory makes writing its name
 * fail with EISDIR and making a directory of its name with EEXIST: those count only for a path
 * the sandbox mounted (or one under a placeholder). EACCES and EPERM are the host's own
 * permissions, never this sandbox's refusal; nor is a write in `/proc` or `/sys` (the kernel's own
 * rules, which no grant changes).
 */
export function linuxRefusal(mounted: ReadonlySet<string>, placeholders: ReadonlySet<string> = new Set()): RefusalTest {
  const underPlaceholder = (path: string) => [...placeholders].some((p) => isWithin(path, p));
  return (candidate) => {
    if (candidate.path !== undefined && inKernelTree(candidate.path)) return false;
    if (candidate.errno === 'EROFS') return true;
    if (candidate.errno === 'EACCES' || candidate.errno === 'EPERM' || candidate.path === undefined) return false;
    return mounted.has(candidate.path) || underPlaceholder(candidate.path);
  };
}
