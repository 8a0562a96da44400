/** Where the daemon runs commands, fixed at start (docs/reach-contract.md: the deployment axis). */
export const DEPLOYMENT_MODES = ['host', 'docker'] as const;
/** One of {@link DEPLOYMENT_MODES}. */
export type DeploymentMode = (typeof DEPLOYMENT_MODES)[number];

// The seed's TERMINAL_SANDBOX_MODE and its `web` name are accepted as aliases.
const ALIASES: Readonly<Record<string, DeploymentMode>> = { host: 'host', docker: 'docker', web: 'docker' };

/**
 * The deployment mode named by `AALIS_DEPLOYMENT` (or its alias `TERMINAL_SANDBOX_MODE`), `host`
 * when neither is set. Read once at daemon start; the daemon never reads it again while running.
 * Throws on an unknown value or on the two variables disagreeing.
 */
export function deploymentModeFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): DeploymentMode {
  const named = (['AALIS_DEPLOYMENT', 'TERMINAL_SANDBOX_MODE'] as const)
    .map((name) => [name, env[name]?.trim().toLowerCase()] as const)
    .filter(([, value]) => value !== undefined && value !== '');
  const modes = named.map(([name, value]) => {
    const mode = ALIASES[value as string];
    if (mode === undefined) throw new Error(`${name}=${value} is not a deployment mode; use host or docker (web is an alias of docker)`);
    return mode;
  });
  if (new Set(modes).size > 1) throw new Error(`AALIS_DEPLOYMENT and TERMINAL_SANDBOX_MODE disagree (${named.map(([n, v]) => `${n}=${v}`).join(', ')}); set one`);
  return modes[0] ?? 'host';
}
