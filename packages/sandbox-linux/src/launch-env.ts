/*
 * The launch chain (the root map's python3, util-linux's unshare, the overlay step's sh, mount and
 * umount, then bwrap) runs on the host before any sandbox exists, as root when the daemon is. The
 * request's environment is the owner's (LD_PRELOAD, LD_LIBRARY_PATH, PATH, BASH_ENV, ENV, ...): in
 * that chain it would load code into root's processes or redirect which program runs. So every
 * program of the chain gets {@link LAUNCH_ENV} and nothing else, and the command's own environment
 * reaches only bwrap's child: bwrap clears its environment (`--clearenv`) and sets each variable
 * (`--setenv`) from arguments read from {@link ENV_FD}, not from its argv, because a process's
 * command line is readable by every user of the machine and its environment is not.
 */

/** The fd bwrap reads the command's environment from (`--args`), as NUL-separated `--setenv NAME VALUE` arguments. */
export const ENV_FD = 7;

/** The whole environment of every program of the launch chain: programs are named by absolute path, so PATH only serves their own children (mount's helpers). */
export const LAUNCH_ENV: Readonly<{ PATH: string }> = Object.freeze({ PATH: '/usr/sbin:/usr/bin:/sbin:/bin' });

/** bwrap's arguments, in front of the mounts, that hand the command `env` and nothing of the chain's. */
export function envFlags(): string[] {
  return ['--clearenv', '--args', String(ENV_FD)];
}

/** The command's environment as bwrap arguments: each name and value a separate operand, so none is read as an option. */
export function commandEnvArgs(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]);
}

/** {@link commandEnvArgs} as the NUL-separated bytes bwrap reads on {@link ENV_FD}. */
export function commandEnvBytes(env: Readonly<Record<string, string>>): Uint8Array {
  return new Uint8Array(Buffer.concat(commandEnvArgs(env).map((a) => Buffer.from(`${a}\0`))));
}
