#!/usr/bin/env node
// The CLI from its TypeScript source, for the checkout's tests only (they run without a build):
// tsx compiles, and the `aalis-source` condition (NODE_OPTIONS, set by vitest.config.ts) points
// every @aalis/* import at src/. Users never run this: `bin/aalis.cjs` runs the built code.
import { register } from 'tsx/esm/api';

if (!`${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`.includes('--conditions=aalis-source')) {
  process.stderr.write('source.mjs: run with --conditions=aalis-source (vitest sets it in NODE_OPTIONS), or the @aalis/* imports resolve to dist/\n');
  process.exit(1);
}
register();
await import('../src/main.ts');
