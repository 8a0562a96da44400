import { execFile } from 'node:child_process';
import { userInfo } from 'node:os';
import { isAbsolute } from 'node:path';
import { envNameMatches, filterSecretEnv, SECRET_ENV_RULES, type SecretEnvConfig, sandboxStoreEnv } from '@aalis/api-reach';

/** How the owner's environment was obtained. */
export type LoginEnv =
  | { readonly source: 'login-shell'; readonly shell: string; readonly env: Readonly<Record<string, string>> }
  | { readonly source: 'process'; readonly env: Readonly<Record<string, string>> }
  | { readonly source: 'fallback'; readonly reason: string; readonly env: Readonly<Record<string, string>> };

/**
 * Captures the owner's login-shell environment once (`$SHELL -l -c 'env -0'`), so tools on the host
 * see the PATH and variables the owner's terminal has, not the daemon's. Without `SHELL` (a
 * service manager, CI) the shell is the account's login shell from the user database. On a
 * timeout or any failure it falls back to the daemon's own environment and says why.
 */
export function captureLoginEnv(options: { shell?: string; timeoutMs: number; base: NodeJS.ProcessEnv }): Promise<LoginEnv> {
  const fallback = (reason: string): LoginEnv => ({ source: 'fallback', reason, env: definedOnly(options.base) });
  const shell = options.shell ?? (options.base.SHELL || accountShell());
  if (!shell) return Promise.resolve(fallback('SHELL is not set and the account has no login shell'));
  return new Promise((resolve) => {
    execFile(
      shell,
      ['-l', '-c', 'env -0'],
      { timeout: options.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 4 * 1024 * 1024, env: definedOnly(options.base), encoding: 'utf8' },
      (error, stdout) => {
        if (error) {
          const timedOut = (error as { killed?: boolean }).killed === true;
          resolve(fallback(timedOut ? `the login shell ${shell} did not answer within ${options.timeoutMs} ms` : `the login shell ${shell} failed: ${error.message}`));
          return;
        }
        const env: Record<string, string> = {};
        for (const entry of stdout.split('\0')) {
          const eq = entry.indexOf('=');
          if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
        }
        resolve(Object.keys(env).length > 0 ? { source: 'login-shell', shell, env } : fallback(`the login shell ${shell} printed no environment`));
      },
    );
  });
}

/**
 * The filtered environments of frozen owner environments, by the filter's config: the owner's is
 * captured once and frozen, so filtering it again on every call (a few hundred names, each
 * against every rule) only cost the daemon's thread. An environment that is not frozen could
 * change after it was filtered: it is filtered every time.
 */
const filtered = new WeakMap<Readonly<Record<string, string>>, Map<string, Readonly<Record<string, string>>>>();

function filteredOf(ownerEnv: Readonly<Record<string, string>>, secrets: SecretEnvConfig): Readonly<Record<string, string>> {
  if (!Object.isFrozen(ownerEnv)) return filterSecretEnv(ownerEnv, secrets).env;
  const key = JSON.stringify([secrets.allow, secrets.deny]);
  let byConfig = filtered.get(ownerEnv);
  if (byConfig === undefined) {
    byConfig = new Map();
    filtered.set(ownerEnv, byConfig);
  }
  let env = byConfig.get(key);
  if (env === undefined) {
    env = Object.freeze(filterSecretEnv(ownerEnv, secrets).env);
    byConfig.set(key, env);
  }
  return env;
}

/**
 * The environment of a command the owner let run on the host: the owner's as it is (their
 * credentials are theirs to use there), less the daemon's own `AALIS_*` (its token, its data
 * directory): a host command's output goes back to the model and the conversation, a group's
 * perhaps, and `env` printed the token there (found by an attack).
 */
export function hostEnvOf(ownerEnv: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(ownerEnv)) if (!DAEMON_OWN.some((rule) => envNameMatches(rule.pattern, key))) env[key] = value;
  return env;
}

/** The variables no command gets, not even on the host: api-reach's rules that no allow list lifts (the daemon's own). */
const DAEMON_OWN = SECRET_ENV_RULES.filter((rule) => !rule.allowable);

/**
 * The environment of a sandboxed command: the owner's, minus the variables api-reach's
 * {@link filterSecretEnv} removes (credentials by name, the daemon's own `AALIS_*`, agent
 * sockets) unless the config allows them, plus what the sandbox needs.
 */
export function sandboxEnvOf(
  ownerEnv: Readonly<Record<string, string>>,
  sessionTmp: string,
  secrets: SecretEnvConfig = { allow: [], deny: [] },
  userHome?: string,
): Record<string, string> {
  const env = { ...filteredOf(ownerEnv, secrets) };
  env.TMPDIR = sessionTmp;
  env.TMP = sessionTmp;
  env.TEMP = sessionTmp;
  // Python writes bytecode next to the source, which is read-only in the sandbox.
  env.PYTHONPYCACHEPREFIX = `${sessionTmp}/pycache`;
  // pnpm's and bun's stores share inodes with installed node_modules and are not writable: the
  // command's installs use stores of their own, in the owner's writable caches (without a home
  // they fail on the read-only store).
  const home = userHome ?? env.HOME;
  if (home !== undefined && isAbsolute(home)) Object.assign(env, sandboxStoreEnv(home, process.platform));
  return env;
}

/** The account's login shell from the user database, unless it is one that refuses logins. */
function accountShell(): string | undefined {
  let shell: string | null;
  try {
    shell = userInfo().shell;
  } catch {
    return undefined;
  }
  if (!shell || !isAbsolute(shell) || /\/(nologin|false)$/.test(shell)) return undefined;
  return shell;
}

/** `env` without its unset entries. */
export function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}
