import { SECRET_ENV_RULES, type SecretEnvConfig } from '@aalis/api-reach';
import { loadConfig } from './daemon/config.js';

/** The environment filter a daemon started from a config applies, and where its lists came from. */
export interface SecretEnvView {
  /** The config file read, or `undefined` when there is none (the defaults apply). */
  readonly file: string | undefined;
  readonly config: SecretEnvConfig;
  readonly rules: typeof SECRET_ENV_RULES;
}

/**
 * The environment filter of the daemon configured in `deploymentDir` (or `configFile`): the
 * rules every sandboxed command gets and the config's `reach.env` allow and deny lists. Throws
 * the config's own error when it cannot be read.
 */
export function secretEnvView(deploymentDir: string, configFile?: string): SecretEnvView {
  const { file, config } = loadConfig(deploymentDir, configFile);
  return { file, config: config.reach?.env ?? { allow: [], deny: [] }, rules: SECRET_ENV_RULES };
}

/** The filter in words: what is removed and why, what the config lets through or adds. */
export function describeSecretEnv(view: SecretEnvView): string {
  const width = Math.max(...view.rules.map((r) => r.pattern.length));
  const rules = view.rules.map((r) => `    ${r.pattern.padEnd(width)}  ${r.reason}${r.allowable ? '' : ' (cannot be allowed)'}`).join('\n');
  const list = (names: readonly string[]) => (names.length > 0 ? names.join(', ') : '(none)');
  const from = view.file ?? 'no config file: defaults';
  return [
    'environment of sandboxed commands: variables matching these are removed (case not compared):',
    rules,
    `  allowed through by the config (${from}): ${list(view.config.allow)}`,
    `  removed besides, by the config: ${list(view.config.deny)}`,
  ].join('\n');
}
