#!/usr/bin/env node
// Runs the CLI from its TypeScript source, so a checkout works without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
