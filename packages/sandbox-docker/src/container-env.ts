import { z } from 'zod';

/** Variables a container gets when the request carries them, whatever the tool's spec says. */
export const BASE_ENV_ALLOW = ['PATH', 'HOME', 'LANG', 'LANGUAGE', 'LC_*', 'TERM', 'TZ', 'TMPDIR'] as const;

/** The PATH a container gets when the request has none: the image's, not the daemon's. */
export const CONTAINER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * One allow-list entry: a variable name, or a name prefix ending in `*`. `DOCKER_*` names are
 * refused because the docker client would read them as its own settings.
 */
export const EnvAllowEntrySchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, 'an env allow-list entry is a variable name, optionally ending in *')
  .refine((entry) => !entry.toUpperCase().startsWith('DOCKER'), {
    message: 'DOCKER_* variables cannot be passed into a container: the docker client reads them as its own settings',
  });

function allowed(name: string, allow: readonly string[]): boolean {
  return allow.some((entry) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : name === entry));
}

/**
 * The container's whole environment: the request's variables that the allow list names, nothing
 * else (the daemon's own environment never reaches it), with PATH and HOME defaulted to
 * container values. Throws on an allow-list entry or a value that cannot be passed safely.
 */
export function containerEnv(
  requestEnv: Readonly<Record<string, string>>,
  allow: readonly string[],
): Record<string, string> {
  const entries = [...BASE_ENV_ALLOW, ...allow];
  for (const entry of entries) EnvAllowEntrySchema.parse(entry);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(requestEnv)) {
    if (!NAME.test(name) || !allowed(name, entries)) continue;
    if (name.toUpperCase().startsWith('DOCKER')) continue;
    if (value.includes('\0')) throw new Error(`env variable ${name} contains a NUL byte and cannot be passed into a container`);
    env[name] = value;
  }
  env.PATH ??= CONTAINER_PATH;
  // The daemon's home is not mounted; /tmp is the one writable place every container has.
  env.HOME ??= '/tmp';
  return env;
}
