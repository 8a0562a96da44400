import { readFileSync, readlinkSync } from 'node:fs';
import { AalisError } from '@aalis/core';

/**
 * A path the command was given (an argument, an environment variable, its current directory)
 * whose bytes are not UTF-8. Node decodes argv, the environment and the cwd as UTF-8 and puts
 * U+FFFD for every byte that is not, so the path it hands on names another file: a data directory
 * `/srv/d\xff` became `/srv/d\uFFFD`, made fresh and used without a word, and two such names
 * (`\xff`, `\xfe`) became one.
 */
export class NotUtf8PathError extends AalisError<'bad-path'> {
  override readonly name = 'NotUtf8PathError';
}

/** What of this process's input (Linux `/proc/self`) held bytes that are not UTF-8, as Node decoded it. */
export interface LossyInputs {
  /** argv entries as Node decoded them (with U+FFFD). */
  readonly args: ReadonlySet<string>;
  /** Names of environment variables whose values are not UTF-8. */
  readonly env: ReadonlySet<string>;
  /** The current directory is not UTF-8. */
  readonly cwd: boolean;
}

const strict = new TextDecoder('utf-8', { fatal: true });
function utf8(bytes: Buffer): boolean {
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function entries(file: string): Buffer[] {
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch {
    return []; // not Linux: nothing known, nothing refused
  }
  const out: Buffer[] = [];
  for (let start = 0; start < raw.length; ) {
    const end = raw.indexOf(0, start);
    out.push(raw.subarray(start, end < 0 ? raw.length : end));
    start = end < 0 ? raw.length : end + 1;
  }
  return out;
}

/** Reads which argv entries, environment values and whether the cwd are not UTF-8 (`/proc/self`; nothing elsewhere). */
export function lossyInputs(): LossyInputs {
  const args = new Set(entries('/proc/self/cmdline').filter((b) => !utf8(b)).map((b) => b.toString('utf8')));
  const env = new Set<string>();
  for (const e of entries('/proc/self/environ')) {
    const eq = e.indexOf(0x3d);
    if (eq > 0 && !utf8(e.subarray(eq + 1))) env.add(e.subarray(0, eq).toString('utf8'));
  }
  let cwd = false;
  try {
    cwd = !utf8(readlinkSync('/proc/self/cwd', { encoding: 'buffer' }));
  } catch {
    // not Linux
  }
  return { args, env, cwd };
}

const FIX = 'Give a path whose bytes are UTF-8: rename the directory, or make a symlink with a UTF-8 name to it and give that.';

/**
 * Refuses a path option that came in bytes that are not UTF-8 (see {@link NotUtf8PathError}):
 * `value` as given (`from` an argument or the environment variable `envName`), and a relative one
 * or none resolved against a current directory that is not UTF-8. `what` names the option.
 */
export function refuseLossyPath(what: string, value: string | undefined, from: 'arg' | { readonly envName: string } | 'cwd', inputs: LossyInputs): void {
  const lossy = value !== undefined && (from === 'arg' ? inputs.args.has(value) : from !== 'cwd' && inputs.env.has(from.envName));
  const viaCwd = inputs.cwd && (value === undefined || !value.startsWith('/'));
  if (!lossy && !viaCwd) return;
  const where = lossy ? (from === 'arg' ? `the argument ${JSON.stringify(value)}` : `$${(from as { envName: string }).envName}`) : 'the current directory';
  throw new NotUtf8PathError(
    'bad-path',
    `${what}: ${where} is not UTF-8 (shown with U+FFFD for each byte that is not), so the path aalis would use is not the one given: another directory, or the same one for another name; nothing was made or read there.`,
    { fix: FIX },
  );
}

/**
 * Refuses a command's arguments (`aalis exec -- …`) when one came in bytes that are not UTF-8:
 * node hands it on with U+FFFD, so the command would get another argument than the one given
 * (`rm $'f\\xff'` would act on `f\uFFFD`), silently (found by a new user's trial).
 */
export function refuseLossyArgs(args: readonly string[], inputs: () => LossyInputs = lossyInputs): void {
  const odd = args.findIndex((a) => a.includes('\uFFFD'));
  if (odd < 0) return; // none can be lossy: no read of /proc
  const known = inputs();
  const lossy = args.findIndex((a) => known.args.has(a));
  if (lossy < 0) return;
  throw new NotUtf8PathError(
    'bad-path',
    `the command's argument ${lossy + 1} (${JSON.stringify(args[lossy])}) is not UTF-8 (shown with U+FFFD for each byte that is not); aalis receives its arguments as text, so the command would get another argument than the one given; nothing was run.`,
    { fix: "Put the command in a script and run that (sh ./script.sh), or give the bytes to the command another way (printf '\\xff' in sh -c)." },
  );
}
