#!/usr/bin/env node
// The `aalis` command: the built CLI, no TypeScript loader. In a source checkout `pnpm aalis`
// builds it first when the sources are newer (packages/cli/scripts/checkout.mjs). `aalis exec`,
// the command an agent's harness runs again and again, runs from its single-file bundle with its
// code cache (scripts/bundle.mjs, exec-loader.mjs), or through the exec helper a run before it
// started (exec-client.cjs); every other command from dist/main.js, each loading only its own
// modules. CommonJS: an ES module entry costs node its ES loader's start before the first line
// (12 ms of a 190 ms run through the helper here), which only the other commands need.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const exec = join(__dirname, '..', 'dist', 'aalis-exec.cjs');
const main = join(__dirname, '..', 'dist', 'main.js');
if ((process.argv[2] === 'exec' || process.argv[2] === '__exec-helper') && existsSync(exec)) {
  // through the exec helper when one answers, else here (exec-client.cjs)
  void require('./exec-client.cjs').execEntry(exec, __filename);
} else if (existsSync(main)) {
  void import(require('node:url').pathToFileURL(main).href);
} else {
  process.stderr.write("aalis: this copy of @aalis/cli has no built code (dist/main.js is missing). In a source checkout run 'pnpm aalis …', which builds it once, or 'pnpm build'; from npm, reinstall @aalis/cli.\n");
  process.exitCode = 1;
}
