import { foldPath, type RefusalTest, type SandboxPolicy } from '@aalis/api-reach';
import { darwinPath } from './darwin-path.js';
import { policyAllowsRead, policyAllowsWrite } from './policy-verdict.js';
import { foldersAbove } from './read-carry.js';

// What the profile refuses to unlink besides what it refuses to write: read-denied names, the
// folders above them, and the writable roots themselves (the carry and roots layers).
function keptInPlace(policy: SandboxPolicy): (path: string) => boolean {
  const fixed = new Set(
    [...policy.write, ...policy.readDeny.flatMap((rule, index) => foldersAbove(rule, `readDeny[${index}]`))].map((p) => foldPath(darwinPath(p, 'stderr'), 'darwin')),
  );
  return (path) => fixed.has(foldPath(path, 'darwin')) || !policyAllowsRead(policy, path);
}

/**
 * Which refusals a stderr line reports are Seatbelt's under `policy` (api-reach's
 * `refusedWritesIn` reads the lines). Seatbelt refuses with EPERM and prints nothing itself; a
 * refused read or connection says the same words, so a path counts when the policy lets it be
 * read but not written. A rename's source is a write whatever else is true of it: refused when it
 * may not be written, or must stay where it is (a read-denied name, a folder above one, a root).
 * A refusal without a path is not counted (it may be a read's). The path reported is the real
 * one (`/etc/x` is `/private/etc/x`); one it cannot judge (a control character) is left out.
 */
export function darwinRefusal(policy: SandboxPolicy): RefusalTest {
  let kept: ((path: string) => boolean) | undefined;
  return (candidate) => {
    if (candidate.errno !== 'EPERM' || candidate.path === undefined) return false;
    const path = darwinPath(candidate.path, 'stderr');
    if (candidate.role === 'rename-source') {
      kept ??= keptInPlace(policy);
      return !policyAllowsWrite(policy, path) || kept(path) ? path : false;
    }
    return policyAllowsRead(policy, path) && !policyAllowsWrite(policy, path) ? path : false;
  };
}
