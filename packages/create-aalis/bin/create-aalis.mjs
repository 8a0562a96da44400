#!/usr/bin/env node
// `npm create aalis@latest my-bot`: the built scaffolder, no TypeScript loader.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (existsSync(main)) {
  await import(main.href);
} else {
  process.stderr.write("create-aalis: this copy has no built code (dist/main.js is missing). In a source checkout run 'pnpm build'; from npm, run it again with 'npm create aalis@latest'.\n");
  process.exitCode = 1;
}
