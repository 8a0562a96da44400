import { inKernelTree, type RefusalTest } from '@aalis/api-reach';
import type { MountPlan } from './mount-plan.js';
import { isWithin } from './rule-match.js';

/**
 * Which refusals a stderr line reports are this container's (api-reach's `refusedWritesIn` reads
 * the lines). The container's root is `--read-only`, hidden paths get read-only masks and the
 * write layers read-only binds, so the kernel answers EROFS for every write the mounts refuse:
 * every EROFS counts, with its path or without one. Removing or renaming onto one of the
 * container's mount points answers EBUSY (and a mask EEXIST, ENOTDIR or EISDIR): those count for a
 * mount point. EACCES and EPERM count only for a path outside the writable mounts (and outside the
 * private `/tmp`): inside them they are the host's own permissions (the restricted uid 10001 in
 * a workspace it does not own) or a dropped capability, which no grant changes. Nor is a write in
 * `/proc` or `/sys` (the kernel's own rules).
 */
export function dockerRefusal(plan: MountPlan): RefusalTest {
  const mountPoints = new Set(plan.mounts.map((m) => m.path));
  // the container's own tmpfs: /tmp outside every host path mounted into it
  const privateTmp = (path: string) => plan.tmpfsTmp && isWithin(path, '/tmp') && !plan.mounts.some((m) => isWithin(path, m.path));
  return (candidate) => {
    if (candidate.path !== undefined && inKernelTree(candidate.path)) return false;
    if (candidate.errno === 'EROFS') return true;
    if (candidate.path === undefined) return false;
    if (candidate.errno === 'EACCES' || candidate.errno === 'EPERM') return !plan.writableAt(candidate.path) && !privateTmp(candidate.path);
    return mountPoints.has(candidate.path);
  };
}
