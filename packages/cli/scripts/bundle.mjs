#!/usr/bin/env node
// Build step (after tsc): `aalis exec` as one file, dist/aalis-exec.js, which bin/aalis.mjs runs for
// `aalis exec …`. Unbundled, every run resolves, reads and links ≈ 400 modules (≈ 100 of them
// execa's, ≈ 100 zod's) before the sandbox starts; one file is one read and one compile. esbuild is
// a build-time tool only: nothing here runs when a user runs `aalis`. The @aalis packages come from
// their TypeScript sources (the `aalis-source` condition), as the tests run them; third-party code
// keeps its licence comments at the end of the file.
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
export async function bundleExec(outfile = resolve(here, '..', 'dist', 'aalis-exec.js')) {
  const result = await build({
    entryPoints: [resolve(here, '..', 'src', 'exec-main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['aalis-source'],
    // the CommonJS packages in the graph (cross-spawn's `require('child_process')`) need a require
    banner: { js: "import { createRequire as __aalisCreateRequire } from 'node:module';\nconst require = __aalisCreateRequire(import.meta.url);" },
    legalComments: 'eof',
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    metafile: true,
    plugins: [zodEnglishOnly],
    logLevel: 'warning',
  });
  return { outfile, inputs: Object.keys(result.metafile.inputs) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { outfile, inputs } = await bundleExec();
  process.stdout.write(`bundled aalis exec: ${inputs.length} modules into ${outfile}\n`);
}
