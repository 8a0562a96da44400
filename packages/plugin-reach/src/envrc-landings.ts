import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { PathMatcher } from '@aalis/api-reach';
import { ENVRC_MAX_BYTES, envrcReferences, readRegularSync } from '@aalis/core';

/**
 * What the `.envrc` files at and above a main directory make direnv run (core's
 * `envrcReferences`: a `PATH_add` folder, a `source_env` or `dotenv` file, a local flake, …), as
 * landings of the policy: read for every call, as a `core.hooksPath` is, so every backend, the
 * host tools and `aalis explain` judge them, not only the Linux sandbox's commit (which also reads
 * the `.envrc` files below and protects the folder of one it cannot tell whole). Only what an
 * `.envrc` names plainly is added here.
 */
export function envrcLandingsOf(home: string): PathMatcher[] {
  const out: PathMatcher[] = [];
  for (let dir = home; ; dir = dirname(dir)) {
    const envrc = join(dir, '.envrc');
    const read = readRegularSync(envrc, { maxBytes: ENVRC_MAX_BYTES, follow: true });
    if (read.kind === 'read') {
      const refs = envrcReferences(envrc, read.bytes.toString('utf8'), homedir());
      for (const path of refs.paths) out.push({ path });
      for (const pattern of refs.patterns) out.push({ pattern });
    }
    if (dirname(dir) === dir) return out;
  }
}
