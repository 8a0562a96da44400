// Loads the `aalis exec` bundle (dist/aalis-exec.cjs, scripts/bundle.mjs) with the V8 code cache made
// beside it at build time, so a run does not parse the whole file again before it starts. Shared by
// bin/aalis.mjs, which runs the bundle, and scripts/bundle.mjs, which makes the cache: one wrapper.
// V8 checks a cache against the source's length only; the cache therefore starts with the SHA-256 of
// the exact source it was made from, and is used only for that source (else V8 compiles as usual).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

const DIGEST_BYTES = 32;

/** The bundle's CommonJS source wrapped as a function of what Node gives a CommonJS module. */
export const wrapExec = (code) => `(function (exports, require, module, __filename, __dirname) {${code}\n})`;

/** The cache file's header: the SHA-256 of the source the cache belongs to. */
export const digestOf = (code) => createHash('sha256').update(code).digest();

/**
 * Compiles the bundle at `file`, with `<file>.cache` when that cache was made from exactly this
 * source. `cached` says whether V8 took it.
 */
export function compileExec(file) {
  const code = readFileSync(file, 'utf8');
  let cachedData;
  try {
    const cache = readFileSync(`${file}.cache`);
    if (cache.length > DIGEST_BYTES && cache.subarray(0, DIGEST_BYTES).equals(digestOf(code))) cachedData = cache.subarray(DIGEST_BYTES);
  } catch {
    // no cache: compile from the source
  }
  const script = new Script(wrapExec(code), { filename: file, ...(cachedData ? { cachedData } : {}) });
  return { script, cached: cachedData !== undefined && !script.cachedDataRejected };
}

/** Runs the bundle at `file` as Node would run it as a CommonJS module. */
export function runExec(file) {
  const module = { exports: {} };
  const { script } = compileExec(file);
  performance.mark('aalis:compiled'); // a phase of bench/startup.ts (src/exec-phases.ts)
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
}
