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
  return envrcLoadsOf(home).flatMap((e) => [...e.paths.map((path) => ({ path })), ...e.patterns.map((pattern) => ({ pattern }))]);
}

/** One `.envrc` at or above a main directory and what it loads ({@link envrcLoadsOf}). */
export interface EnvrcLoads {
  readonly envrc: string;
  /** Files and folders it loads, each a landing with all under it. */
  readonly paths: readonly string[];
  /** Whole-path patterns (a local flake's `.nix` files). */
  readonly patterns: readonly string[];
  /** What it loads that cannot be told here (a variable): not a landing of the policy; the Linux commit and the docker check protect its folder whole. */
  readonly unresolved: readonly string[];
}

/** The `.envrc` files at and above `home` that can be read, nearest first, with what each loads: what {@link envrcLandingsOf} adds, and what `aalis doctor` shows. */
export function envrcLoadsOf(home: string): EnvrcLoads[] {
  const out: EnvrcLoads[] = [];
  for (let dir = home; ; dir = dirname(dir)) {
    const envrc = join(dir, '.envrc');
    const read = readRegularSync(envrc, { maxBytes: ENVRC_MAX_BYTES, follow: true });
    if (read.kind === 'read') out.push({ envrc, ...envrcReferences(envrc, read.bytes.toString('utf8'), homedir(), process.env) });
    if (dirname(dir) === dir) return out;
  }
}
