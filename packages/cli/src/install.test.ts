// Where the CLI finds its install, from where its own code lies: a checkout, or the project whose
// node_modules holds it (npm's flat layout, pnpm's .pnpm store), whose package.json and
// node_modules then become control plane.
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installOf } from './install.js';

const checkout = resolve(import.meta.dirname, '..', '..', '..');

describe('installOf', () => {
  it.each([
    ['the checkout, from source', join(checkout, 'packages', 'cli', 'src'), { dir: checkout, form: 'source' }],
    ['the checkout, built', join(checkout, 'packages', 'cli', 'dist'), { dir: checkout, form: 'source' }],
    ['an npm project', '/srv/my-bot/node_modules/@aalis/cli/dist', { dir: '/srv/my-bot', form: 'npm' }],
    ['a pnpm project', '/srv/my-bot/node_modules/.pnpm/@aalis+cli@0.1.0/node_modules/@aalis/cli/dist', { dir: '/srv/my-bot', form: 'npm' }],
    ['a global npm install', '/usr/lib/node_modules/@aalis/cli/dist', { dir: '/usr/lib', form: 'npm' }],
  ])('%s', (_name, here, expected) => {
    expect(installOf(`${here}/`)).toEqual(expected);
  });
});
