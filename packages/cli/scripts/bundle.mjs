#!/usr/bin/env node
// Build step (after tsc): `aalis exec` as one file, dist/aalis-exec.cjs, which bin/aalis.cjs runs for
// `aalis exec …`. Unbundled, every run resolves, reads and links ≈ 400 modules (≈ 100 of them
// execa's, ≈ 100 zod's) before the sandbox starts; one file is one read and one compile. esbuild is
// a build-time tool only: nothing here runs when a user runs `aalis`. The @aalis packages come from
// their TypeScript sources (the `aalis-source` condition), as the tests run them; third-party code
// keeps its licence comments at the end of the file. CommonJS, because Node 20 takes a V8 code cache
// only for a script: `<bundle>.cache`, made here (scripts/exec-cache.mjs), spares each run the parse
// and compile of the code it runs.
import { spawnSync } from 'node:child_process';
import { isAscii } from 'node:buffer';
import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * zod's error messages in its ~60 languages: `z.locales` makes them all part of the graph, and
 * evaluating them was the largest single module cost of a run. aalis never switches zod's language
 * (English is registered by zod's schemas.js directly, not through this index), so the bundle's
 * index offers English alone.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({ contents: 'export { default as en } from "./en.js";\n', loader: 'js' }));
  },
};

/**
 * Bundles src/exec-main.ts into `outfile`. Its directory must sit where dist/ does (two levels
 * under packages/): `installOf` finds the install from the bundle's own place.
 */
export async function bundleExec(outfile = resolve(here, '..', 'dist', 'aalis-exec.cjs')) {
  const result = await build({
    entryPoints: [resolve(here, '..', 'src', 'exec-main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    conditions: ['aalis-source'],
    // import() of a Node module becomes require(): a vm script has no loader for import()
    supported: { 'dynamic-import': false },
    // the modules that find their own place (install.ts) get the bundle's
    define: { 'import.meta.url': '__aalisBundleUrl' },
    // strict, as the ES modules it is made of were (a write to a frozen object throws, not ignored)
    banner: { js: '"use strict";\nconst __aalisBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
    legalComments: 'eof',
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    metafile: true,
    plugins: [zodEnglishOnly],
    logLevel: 'warning',
  });
  // ASCII, so that each run reads it as a one-byte string (bin/exec-loader.mjs): esbuild escapes
  // non-ASCII in strings but not in a regular expression's literal characters
  const bytes = readFileSync(outfile);
  if (!isAscii(bytes)) {
    const at = bytes.findIndex((b) => b > 0x7f);
    throw new Error(`${outfile} is not ASCII at byte ${at} (${JSON.stringify(bytes.subarray(Math.max(0, at - 40), at + 8).toString('utf8'))}): write the character as a \\u escape in the source`);
  }
  // the code cache, made after a run of `aalis exec --help` from the bundle (scripts/exec-cache.mjs)
  // in a plain node, as a user's runs it: no flags of this process (V8 rejects a cache made under other flags)
  rmSync(`${outfile}.cache`, { force: true });
  const made = spawnSync(process.execPath, [resolve(here, 'exec-cache.mjs'), outfile], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  if (made.status !== 0) throw new Error(`the code cache of ${outfile} could not be made: ${made.stderr || `exit ${made.status}`}`);
  return { outfile, inputs: Object.keys(result.metafile.inputs) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { outfile, inputs } = await bundleExec();
  process.stdout.write(`bundled aalis exec: ${inputs.length} modules into ${outfile}\n`);
}
