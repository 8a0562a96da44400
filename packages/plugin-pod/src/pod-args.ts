import { parseArgs } from 'node:util';
import { AalisError } from '@aalis/core';

/** The flags of `aalis pod …` that take a value; each may be given more than once. */
export const POD_VALUE_FLAGS = ['subdir', 'session', 'as', 'file', 'files', 'to', 'on-clash'] as const;
/** The flags of `aalis pod …` that take no value. */
export const POD_BOOLEAN_FLAGS = ['wait', 'move', 'yes', 'remember', 'all', 'outside-workspace', 'json', 'help'] as const;

/** A command line of `aalis pod …` that cannot be read; the command exits 2. */
export class PodUsageError extends AalisError<'usage'> {
  override readonly name = 'PodUsageError';
  constructor(message: string) {
    super('usage', message);
  }
}

/** A parsed `aalis pod` command line: positionals (everything after `--` among them), values by `--flag`, and the boolean flags given. */
export interface PodArgs {
  readonly positional: string[];
  readonly values: Map<string, string[]>;
  readonly flags: Set<string>;
}

const OPTIONS = Object.fromEntries([
  ...POD_VALUE_FLAGS.map((name) => [name, { type: 'string', multiple: true }] as const),
  ...POD_BOOLEAN_FLAGS.map((name) => [name, name === 'help' ? { type: 'boolean', short: 'h' } : { type: 'boolean' }] as const),
]);

/** The `--flag` node's parser named in its message, for an error in the pod's own words. */
function flagIn(message: string): string {
  return /'(-[^' ]+)/.exec(message)?.[1] ?? 'an option';
}

/**
 * Reads the arguments of one `aalis pod` command with node's parser, strictly. A value that starts
 * with `-` is given as `--flag=-value`; a positional that starts with `-` goes after `--`. Throws
 * {@link PodUsageError} for an unknown flag, a missing value, or a value that looks like a flag.
 */
export function parsePodArgs(argv: readonly string[]): PodArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message = error instanceof Error ? error.message : String(error);
    const flag = flagIn(message);
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new PodUsageError(`unknown option ${flag}. A text that starts with '-' goes after '--'.`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && message.includes('ambiguous')) {
      throw new PodUsageError(`${flag} needs a value; a value that starts with '-' is written ${flag}=-… so it is not taken for an option.`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && message.includes('does not take an argument')) throw new PodUsageError(`${flag} takes no value.`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new PodUsageError(`${flag} needs a value.`);
    throw new PodUsageError(message);
  }
  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  for (const [name, value] of Object.entries(parsed.values)) {
    if (Array.isArray(value)) values.set(`--${name}`, value.map(String));
    else if (value === true) flags.add(`--${name}`);
  }
  return { positional: parsed.positionals, values, flags };
}
