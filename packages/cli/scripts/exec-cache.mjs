#!/usr/bin/env node
// Build step, run by scripts/bundle.mjs in a child process: `node scripts/exec-cache.mjs <bundle>`
// makes `<bundle>.cache`, the V8 code cache that bin/exec-loader.mjs hands V8 on every `aalis exec`.
// The cache is taken after a run of `aalis exec --help` from the bundle, not right after the
// compile: V8 compiles a function only when it is first called, and a cache made after the run
// holds every function the run compiled (all the modules' top-level code, the argument parsing),
// which a cache made at compile time leaves to each run. `--help` starts no sandbox and writes
// nothing; its output goes nowhere. Written aside and renamed, so a reader never sees half of one.
import { renameSync, writeFileSync } from 'node:fs';
import { compileExec, digestOf, readExec, startExec } from '../bin/exec-loader.mjs';

const file = process.argv[2];
const { bytes } = readExec(file);
const { script } = compileExec(file);
process.argv = [process.argv[0], file, 'exec', '--help'];
process.on('exit', (code) => {
  if (code !== 0) return; // a failed run proves nothing about the bundle: the build fails below
  const cache = script.createCachedData();
  writeFileSync(`${file}.cache.tmp`, Buffer.concat([digestOf(bytes), cache]));
  renameSync(`${file}.cache.tmp`, `${file}.cache`);
});
startExec(script, file);
