import { randomInt } from 'node:crypto';

/**
 * The letters an approval code is made of: digits and upper-case letters without the ones
 * people confuse when reading or typing them (0/O, 1/I/L, U/V).
 */
export const CODE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTWXYZ';

/** Shortest and longest code the plugin accepts in its config. */
export const CODE_LENGTH_RANGE = [4, 12] as const;

/** A random code of `length` letters from {@link CODE_ALPHABET}, from a cryptographic source. */
export function randomCode(length: number): string {
  let code = '';
  for (let i = 0; i < length; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** A typed code read back: the canonical code, or why it is not one. */
export type ParsedCode = { readonly ok: true; readonly code: string } | { readonly ok: false; readonly message: string };

/**
 * Reads a code as a person typed it: case, spaces and dashes do not matter. Anything else
 * outside the alphabet is refused with the alphabet named, so the person can retype it.
 */
export function parseCode(input: string): ParsedCode {
  const code = input.replace(/[\s-]+/g, '').toUpperCase();
  if (code === '') return { ok: false, message: 'no approval code was given; reply with the code shown in the approval request.' };
  const bad = [...code].filter((c) => !CODE_ALPHABET.includes(c));
  if (bad.length > 0) {
    return {
      ok: false,
      message: `'${input}' is not an approval code: ${[...new Set(bad)].map((c) => `'${c}'`).join(', ')} never appear in codes (they use only ${CODE_ALPHABET}).`,
    };
  }
  return { ok: true, code };
}
