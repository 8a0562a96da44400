#!/usr/bin/env node
// Build step (after tsc): `aalis exec` as one file, dist/aalis-exec.cjs, which bin/aalis.mjs runs for
// `aalis exec …`. Unbundled, every run resolves, reads and links ≈ 400 modules (≈ 100 of them
// execa's, ≈ 100 zod's) before the sandbox starts; one file is one read and one compile. esbuild is
// a build-time tool only: nothing here runs when a user runs `aalis`. The @aalis packages come from
// their TypeScript sources (the `aalis-source` condition), as the tests run them; third-party code
// keeps its licence comments at the end of the file. CommonJS, because Node 20 takes a V8 code cache
// only for a script: `<bundle>.cache`, made here, spares each run the parse of the whole file.
import { renameSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Script } from 'node:vm';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { digestOf, wrapExec } from '../bin/exec-loader.mjs';

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
  // the cache of the compiled top level, headed by the digest of the exact source it belongs to;
  // written aside and renamed, so a reader never sees half of one
  const code = readFileSync(outfile, 'utf8');
  const cache = new Script(wrapExec(code), { filename: outfile }).createCachedData();
  writeFileSync(`${outfile}.cache.tmp`, Buffer.concat([digestOf(code), cache]));
  renameSync(`${outfile}.cache.tmp`, `${outfile}.cache`);
  return { outfile, inputs: Object.keys(result.metafile.inputs) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { outfile, inputs } = await bundleExec();
  process.stdout.write(`bundled aalis exec: ${inputs.length} modules into ${outfile}\n`);
}
