import { sbplString } from './sbpl-string.js';

/** How a string of the policy is written into a profile: inline as an SBPL string, or as a parameter. */
export type SbplQuote = (value: string, rule: string) => string;

/** Inline: the string itself, escaped ({@link sbplString}). For display and the golden files. */
export const inlineQuote: SbplQuote = sbplString;

/**
 * Collects the policy's strings as `sandbox-exec -D` parameters: the profile text gets
 * `(param "P0")`, the value travels in argv byte for byte, so no path is ever parsed as
 * profile text. The same refusals as inline apply (control characters, lone surrogates), so
 * both forms accept exactly the same policies. Equal values share one parameter.
 */
export class ProfileParams {
  private readonly keys = new Map<string, string>();

  /** The {@link SbplQuote} that records `value` and returns its parameter reference. */
  readonly quote: SbplQuote = (value, rule) => {
    sbplString(value, rule);
    let key = this.keys.get(value);
    if (key === undefined) {
      key = `P${this.keys.size}`;
      this.keys.set(value, key);
    }
    return `(param "${key}")`;
  };

  /** The parameters, key to value, in the order they were first used. */
  values(): Readonly<Record<string, string>> {
    return Object.fromEntries([...this.keys].map(([value, key]) => [key, value]));
  }
}

/** `params` as sandbox-exec arguments: `-D KEY=VALUE` each (sandbox-exec splits at the first `=`). */
export function defineArgs(params: Readonly<Record<string, string>>): string[] {
  return Object.entries(params).flatMap(([key, value]) => ['-D', `${key}=${value}`]);
}
