import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { knownDaemons, registryDir } from './daemon-registry.js';
import { type LossyInputs, lossyInputs, refuseLossyPath } from './lossy-inputs.js';

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
  /** What of the process's input was not UTF-8 (default: read from /proc/self when a path may be affected). */
  readonly lossy?: LossyInputs;
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
  const lossy = lossyOf(input, env);
  if (lossy && input.data === undefined && !env.AALIS_DATA) refuseLossyPath(input.dir !== undefined ? '--dir' : 'the deployment directory (looked up from the current directory)', input.dir, 'arg', lossy);
  const deployment = input.dir !== undefined ? resolve(input.dir) : deploymentDirOf(input.cwd ?? process.cwd());
  if (input.data) {
    if (lossy) refuseLossyPath('--data', input.data, 'arg', lossy);
    return { dataDir: resolve(input.data), source: '--data', deployment };
  }
  if (env.AALIS_DATA) {
    if (lossy) refuseLossyPath('AALIS_DATA', env.AALIS_DATA, { envName: 'AALIS_DATA' }, lossy);
    return { dataDir: resolve(env.AALIS_DATA), source: 'AALIS_DATA', deployment };
  }
  if (deployment !== undefined) return { dataDir: join(deployment, 'data'), source: 'deployment', deployment };
  const home = env.XDG_DATA_HOME ? 'XDG_DATA_HOME' : 'HOME';
  if (lossy) refuseLossyPath('the default data directory', env[home], { envName: home }, { ...lossy, cwd: false });
  return { dataDir: defaultDataDir(env), source: 'default', deployment };
}

/**
 * What of the inputs that decide the data directory came in bytes that are not UTF-8 (Node
 * decoded them to U+FFFD, which names another directory: data-dir.test.ts), read only where one
 * of them holds a U+FFFD (no I/O otherwise); undefined when none can have.
 */
function lossyOf(input: DataDirInput, env: NodeJS.ProcessEnv): LossyInputs | undefined {
  if (input.lossy) return input.lossy;
  const odd = (v: string | undefined) => v?.includes('\uFFFD') === true;
  if (![input.data, input.dir, env.AALIS_DATA, input.cwd ?? process.cwd(), env.XDG_DATA_HOME, env.HOME].some(odd)) return undefined;
  return lossyInputs();
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
