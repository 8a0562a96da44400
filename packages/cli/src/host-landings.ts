import { homedir } from 'node:os';
import { join } from 'node:path';
import { XDG_BASES, XDG_VARIABLES, type XdgKind } from '@aalis/api-reach';
import { type EnvrcLoads, envrcLoadsOf, reachXdgDirs } from '@aalis/plugin-reach';

/*
 * Some landings are not in the table by name but read from this machine: where the XDG base
 * directories are (a tool's start files and credentials follow `$XDG_CONFIG_HOME`), and what the
 * `.envrc` files at and above the main directory load. `aalis doctor` shows both, from the
 * code the daemon uses, so a person can see what is protected and why (before, nothing said which
 * XDG directories the daemon took, nor that they come from its own environment).
 */

/** What `aalis doctor` says of the landings read from the machine. */
export interface HostLandingsView {
  /** Each XDG base directory: the variable, and where it is set (as given and as real path) or null at its home default. */
  readonly xdg: readonly { readonly kind: XdgKind; readonly variable: string; readonly set: readonly string[] | null; readonly default: string }[];
  /** The `.envrc` files at and above `cwd`, nearest first, with what each loads. */
  readonly envrc: readonly EnvrcLoads[];
}

/** The view for a main directory `cwd`, from an environment (the daemon takes its own at start). */
export function hostLandingsView(cwd: string, env: Readonly<Record<string, string | undefined>>, home = homedir()): HostLandingsView {
  const dirs = reachXdgDirs(env);
  const xdg = (Object.keys(XDG_VARIABLES) as XdgKind[]).map((kind) => ({ kind, variable: XDG_VARIABLES[kind], set: dirs[kind] ?? null, default: join(home, XDG_BASES[kind]) }));
  return { xdg, envrc: envrcLoadsOf(cwd) };
}

/** The view as lines for `aalis doctor`. */
export function describeHostLandings(view: HostLandingsView): string {
  const lines = ['landings read from this machine (as this shell has them; the daemon takes the environment it starts with):'];
  for (const x of view.xdg) {
    lines.push(x.set === null ? `  ${x.variable}: not set, so ${x.default} (the table's entries there)` : `  ${x.variable}: ${x.set.join(' = ')}; the table's entries under ${x.default} are landings there too`);
  }
  if (view.envrc.length === 0) lines.push('  .envrc: none at or above this directory');
  for (const e of view.envrc) {
    const loads = [...e.paths, ...e.patterns.map((p) => `pattern ${p}`)];
    lines.push(`  ${e.envrc}: ${loads.length === 0 ? 'loads nothing named' : `loads ${loads.join(', ')} (landings)`}`);
    if (e.unresolved.length > 0) lines.push(`    and what cannot be told here (${e.unresolved.join(', ')}): the sandbox's commit protects that folder whole`);
  }
  return `${lines.join('\n')}\n`;
}
