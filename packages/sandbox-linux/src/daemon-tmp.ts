import type { SandboxPolicy } from '@aalis/api-reach';
import { realOr } from './premount.js';
import { isWithin } from './rule-match.js';
import type { TmpPlan } from './translate.js';
import { AalisError } from '@aalis/core';
import type { LinuxErrorCode } from './linux-error-codes.js';

/*
 * The daemon's temp directory holds every run's folder, and under the overlay every run's upper
 * layer: what each command wrote before it was judged, `.env` files the commit will refuse
 * included. Another run's command must never read it. Under /tmp it is out of sight already (the
 * sandbox's /tmp is the session temp or private), unless /tmp is the host's; anywhere else it is
 * covered by an empty tmpfs inside the sandbox, read-only (a write there would otherwise "succeed"
 * and vanish with the command). A policy that needs a path inside it cannot have both, so the run
 * fails closed.
 */

/** The daemon's temp directory cannot be hidden from this run: nothing runs. */
export class DaemonTmpVisibleError extends AalisError<LinuxErrorCode> {
  declare readonly fix: string;
  constructor(
    readonly tmp: string,
    readonly inside: string,
  ) {
    super('daemon-tmp-visible', `the daemon's temp directory ${tmp} holds the runs' unjudged writes and would be visible in the sandbox, and it cannot be hidden because the policy's path ${inside} lies in it`, {
      fix: "set the daemon's tmpDir to a directory no policy path lies in (the default, under /tmp, is one)",
    });
  }
}

/** The bwrap arguments that hide `tmp` inside the sandbox (none where it is out of sight already); throws {@link DaemonTmpVisibleError}. */
export function hideDaemonTmp(given: string, tmpPlan: TmpPlan, policy: SandboxPolicy, cwd: string): string[] {
  // the directory itself: named through a symlink (a TMPDIR that is one), bwrap's tmpfs could not be
  // mounted on the link and no run would start; the policy's paths are real paths too
  const tmp = realOr(given);
  if (isWithin(tmp, '/tmp') && tmpPlan.kind !== 'host') return [];
  const paths = [...policy.write, ...policy.readAllowWithin, ...policy.unixSockets, ...(policy.tmp === undefined ? [] : [policy.tmp]), cwd];
  const inside = paths.find((p) => isWithin(p, tmp));
  if (inside !== undefined) throw new DaemonTmpVisibleError(tmp, inside);
  return ['--tmpfs', tmp, '--remount-ro', tmp];
}
