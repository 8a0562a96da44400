import { parseArgs } from 'node:util';
import { UsageError } from './io.js';

/** A flag a command accepts. */
export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  readonly short?: string;
  /** The accepted values, for the error on a bad one and for --help. */
  readonly choices?: readonly string[];
}

/** Parsed flags and positionals; everything after `--` is kept apart. */
export interface Parsed {
  readonly flags: Record<string, string | boolean | string[] | undefined>;
  readonly positionals: string[];
  readonly rest: string[];
}

/**
 * Parses `argv` strictly: an unknown flag or a value outside `choices` is a {@link UsageError}
 * that lists what is accepted.
 */
export function parse(command: string, argv: readonly string[], specs: Readonly<Record<string, FlagSpec>>): Parsed {
  const dashdash = argv.indexOf('--');
  const head = dashdash >= 0 ? argv.slice(0, dashdash) : [...argv];
  const rest = dashdash >= 0 ? argv.slice(dashdash + 1) : [];
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const [name, spec] of Object.entries(specs)) {
    options[name] = { type: spec.type, ...(spec.multiple ? { multiple: true } : {}), ...(spec.short ? { short: spec.short } : {}) };
  }
  let values: Record<string, unknown>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: head, options, allowPositionals: true, strict: true }));
  } catch (error) {
    const known = Object.keys(options).map((n) => `--${n}`).join(', ');
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    throw new UsageError(`${message}. '${command}' accepts: ${known}.`, command);
  }
  for (const [name, spec] of Object.entries(specs)) {
    const value = values[name];
    if (spec.choices === undefined || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      if (!spec.choices.includes(String(v))) {
        throw new UsageError(`--${name} '${String(v)}' is not accepted; use one of: ${spec.choices.join(', ')}.`, command);
      }
    }
  }
  return { flags: values as Parsed['flags'], positionals, rest };
}
