import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { knownDaemons, registryDir } from './daemon-registry.js';

/** The config file whose directory is a deployment directory (its data is `data/` there). */
const DEPLOYMENT_MARK = 'aalis.config.json';

/** What decides the data directory; every command passes what it has. */
export interface DataDirInput {
  /** `--data`. */
  readonly data?: string | undefined;
  /** `--dir`: the deployment directory, when the command takes one. */
  readonly dir?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
  /** Where the search for a deployment directory starts (default the current directory). */
  readonly cwd?: string;
}

/** The data directory and the rule that chose it. */
export interface DataDirChoice {
  readonly dataDir: string;
  readonly source: '--data' | 'AALIS_DATA' | 'deployment' | 'default';
  /** The deployment directory, when there is one (`--dir`, or found from the current directory). */
  readonly deployment: string | undefined;
}

/** The nearest of `from` and its ancestors that holds `aalis.config.json`, if any. */
export function deploymentDirOf(from: string): string | undefined {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, DEPLOYMENT_MARK))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** `$XDG_DATA_HOME/aalis` (`~/.local/share/aalis`): the data directory of a command with no deployment. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'aalis');
}

/**
 * The one rule for where the data lives, for every command (`exec`, `explain`, `policy`, `serve`,
 * `pod`): `--data`; else `$AALIS_DATA`; else `data/` in the deployment directory (`--dir`, or the
 * nearest of the current directory and its ancestors holding `aalis.config.json`); else
 * `$XDG_DATA_HOME/aalis` (`~/.local/share/aalis`).
 */
export function chooseDataDir(input: DataDirInput = {}): DataDirChoice {
  const env = input.env ?? process.env;
  const deployment = input.dir !== undefined ? resolve(input.dir) : deploymentDirOf(input.cwd ?? process.cwd());
  if (input.data) return { dataDir: resolve(input.data), source: '--data', deployment };
  if (env.AALIS_DATA) return { dataDir: resolve(env.AALIS_DATA), source: 'AALIS_DATA', deployment };
  if (deployment !== undefined) return { dataDir: join(deployment, 'data'), source: 'deployment', deployment };
  return { dataDir: defaultDataDir(env), source: 'default', deployment };
}

/** What a command keeps its sandboxed commands away from, besides its own data directory. */
export interface OtherInstances {
  /** Every other data directory it can know of, and the daemons' registry. */
  readonly otherData: string[];
  /** The ports of the daemons that run now. */
  readonly ports: number[];
}

/**
 * Every data directory a command can know of besides its own: the default one, `$AALIS_DATA`, the
 * deployment directory's `data/`, and every daemon's in the registry (running or not), plus the
 * registry itself; and the ports of the daemons running now. The reach plugin denies them whole.
 */
export function otherInstances(own: DataDirChoice, env: NodeJS.ProcessEnv = process.env): OtherInstances {
  const daemons = knownDaemons(env);
  const dirs = [defaultDataDir(env), ...(env.AALIS_DATA ? [resolve(env.AALIS_DATA)] : []), ...(own.deployment !== undefined ? [join(own.deployment, 'data')] : []), ...daemons.map((d) => d.dataDir), registryDir(env)];
  return {
    otherData: [...new Set(dirs.filter((d) => d !== own.dataDir))],
    ports: [...new Set(daemons.filter((d) => d.running).map((d) => d.port))],
  };
}
