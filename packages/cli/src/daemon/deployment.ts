import type { Deployment } from '@aalis/core';
import { deploymentModeFromEnv } from '@aalis/sandbox-docker';

/** The deployment the daemon runs with, and which setting decided it. */
export interface ChosenDeployment {
  readonly mode: Deployment;
  readonly source: '--deployment' | 'AALIS_DEPLOYMENT' | 'config' | 'default';
}

/**
 * Chooses the deployment once, at start: `--deployment`, else `AALIS_DEPLOYMENT` (or its alias
 * `TERMINAL_SANDBOX_MODE`), else the config's `deployment`, else `host`. It never changes while
 * the daemon runs. A bad environment value is an error, not a fallback.
 */
export function chooseDeployment(flag: Deployment | undefined, config: Deployment | undefined, env: NodeJS.ProcessEnv = process.env): ChosenDeployment {
  if (flag !== undefined) return { mode: flag, source: '--deployment' };
  const named = Boolean(env.AALIS_DEPLOYMENT?.trim() || env.TERMINAL_SANDBOX_MODE?.trim());
  const fromEnv = deploymentModeFromEnv(env);
  if (named) return { mode: fromEnv, source: 'AALIS_DEPLOYMENT' };
  if (config !== undefined) return { mode: config, source: 'config' };
  return { mode: 'host', source: 'default' };
}
