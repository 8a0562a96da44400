#!/usr/bin/env node
// The `aalis` command: the built CLI, no TypeScript loader. In a source checkout `pnpm aalis`
// builds it first when the sources are newer (packages/cli/scripts/checkout.mjs).
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (existsSync(main)) {
  await import(main.href);
} else {
  process.stderr.write("aalis: this copy of @aalis/cli has no built code (dist/main.js is missing). In a source checkout run 'pnpm aalis …', which builds it once, or 'pnpm build'; from npm, reinstall @aalis/cli.\n");
  process.exitCode = 1;
}
