#!/usr/bin/env node
// Runs the CLI from its TypeScript source, so a checkout works without a build step.
import { register } from 'tsx/esm/api';

// `pnpm aalis …` at the repository root runs in the root; the person meant the folder they were in.
if (process.env.npm_lifecycle_event === 'aalis' && process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);

register();
await import('../src/main.ts');
