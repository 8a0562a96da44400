// Loads the `aalis exec` bundle (dist/aalis-exec.cjs, scripts/bundle.mjs) with the V8 code cache made
// beside it at build time, so a run does not parse and compile the bundle's code again before it
// starts. Shared by bin/aalis.cjs, which runs the bundle, and scripts/bundle.mjs, which makes the
// cache: one wrapper. V8 checks a cache against the source's length only; the cache therefore
// starts with the SHA-256 of the exact source it was made from, and is used only for that source
// (else V8 compiles as usual).
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

const DIGEST_BYTES = 32;

/** The bundle's CommonJS source wrapped as a function of what Node gives a CommonJS module. */
export const wrapExec = (code) => `(function (exports, require, module, __filename, __dirname) {${code}\n})`;

/** The cache file's header: the SHA-256 of the source (its bytes, or a string as UTF-8) the cache belongs to. */
export const digestOf = (source) => createHash('sha256').update(source).digest();

/**
 * The bundle's source and bytes. The bundle is ASCII (scripts/bundle.mjs refuses to write another),
 * so its bytes are read as latin1, the same string for ASCII, and a one-byte one: Node 20's UTF-8
 * read of the 1 MB file took 18 ms or more a run. A bundle that is not ASCII is decoded as UTF-8.
 */
export function readExec(file) {
  const bytes = readFileSync(file);
  return { bytes, code: isAscii(bytes) ? bytes.latin1Slice(0, bytes.length) : bytes.toString('utf8') };
}

/**
 * Compiles the bundle at `file`, with `<file>.cache` when that cache was made from exactly this
 * source. `cached` says whether V8 took it.
 */
export function compileExec(file) {
  const { bytes, code } = readExec(file);
  let cachedData;
  try {
    const cache = readFileSync(`${file}.cache`);
    if (cache.length > DIGEST_BYTES && cache.subarray(0, DIGEST_BYTES).equals(digestOf(bytes))) cachedData = cache.subarray(DIGEST_BYTES);
  } catch {
    // no cache: compile from the source
  }
  const script = new Script(wrapExec(code), { filename: file, ...(cachedData ? { cachedData } : {}) });
  return { script, cached: cachedData !== undefined && !script.cachedDataRejected };
}

/** Runs a compiled bundle (`script` of {@link compileExec}) from `file` as Node would run it as a CommonJS module. */
export function startExec(script, file) {
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
}

/** Runs the bundle at `file`: compiled (from its cache), then started. */
export function runExec(file) {
  const { script } = compileExec(file);
  performance.mark('aalis:compiled'); // a phase of bench/startup.ts (src/exec-phases.ts)
  startExec(script, file);
}
