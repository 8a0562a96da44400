#!/usr/bin/env node
// The `aalis` command: the built CLI, no TypeScript loader. In a source checkout `pnpm aalis`
// builds it first when the sources are newer (packages/cli/scripts/checkout.mjs). `aalis exec`,
// the command an agent's harness runs again and again, runs from its single-file bundle with its
// code cache (scripts/bundle.mjs, exec-loader.mjs); every other command from dist/main.js, each
// loading only its own modules.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/main.js', import.meta.url);
const exec = fileURLToPath(new URL('../dist/aalis-exec.cjs', import.meta.url));
if ((process.argv[2] === 'exec' || process.argv[2] === '__exec-helper') && existsSync(exec)) {
  // through the exec helper when one answers, else here (exec-client.mjs)
  const { execEntry } = await import('./exec-client.mjs');
  await execEntry(exec, fileURLToPath(import.meta.url));
} else if (existsSync(main)) {
  await import(main.href);
} else {
  process.stderr.write("aalis: this copy of @aalis/cli has no built code (dist/main.js is missing). In a source checkout run 'pnpm aalis …', which builds it once, or 'pnpm build'; from npm, reinstall @aalis/cli.\n");
  process.exitCode = 1;
}
