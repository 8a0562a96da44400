import { execFileSync } from 'node:child_process';
import { chmodSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LandingScene } from './landing-scene.js';

/** What {@link checkAsNobody} reports: the check's findings, the removal's failures, and what is left. */
export interface NobodyCheck {
  readonly denied: string[];
  readonly unlisted: string[];
  readonly failed: string[];
  readonly notes: string[];
  /** Paths under the workspace named `probe` after the removal. */
  readonly left: string[];
  /** `cfg2/vault`'s mode in octal, or the error code. */
  readonly modeOf: string;
  /** `q/.envrc` as the person reads it after the removal, or the error code. */
  readonly readBack: string;
}

const child = join(import.meta.dirname, 'check-as-nobody.child.ts');

/**
 * The plan, `writes` (standing for the container) and the check with its removal (removeAll), all
 * as nobody: a daemon that is not root, whose containers write as it. `before` runs first, as
 * nobody, before the plan (the person's own files). From source, as a fresh clone has no dist/.
 */
export function checkAsNobody(s: LandingScene, writes: string, probe = '.envrc', before = ''): NobodyCheck {
  // search for everyone on the way, adding the bit only: a mode set outright (0711) took the read
  // bit from the test run's shared folder, and every test as nobody running beside it failed (CI)
  for (let d = s.home; d !== dirname(d) && d !== '/tmp'; d = dirname(d)) chmodSync(d, (statSync(d).mode & 0o7777) | 0o011);
  execFileSync('chown', ['-R', '65534:65534', s.home]);
  const out = execFileSync(
    'setpriv',
    ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--conditions=aalis-source', '--import', 'tsx', child, JSON.stringify({ policy: s.policy, ws: s.ws, writes, probe, before })],
    { encoding: 'utf8', cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH, HOME: s.home } },
  );
  return JSON.parse(out) as NobodyCheck;
}
