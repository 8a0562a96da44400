import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCredential } from './src/guards.js';
import { readSourceTree } from './src/source-tree.js';

const repo = join(import.meta.dirname, '..', '..');
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);

describe('the reach credential brand', () => {
  it('only api-reach and plugin-reach mention the brand or build a ReachCredential, in this repository', () => {
    expect(checkCredential(readSourceTree(repo))).toEqual([]);
  });

  it('catches the brand by name, by its key spelled any constant way, and through unverifiable Symbol.for or symbol readers', () => {
    const root = fixture('violations');
    const found = checkCredential(readSourceTree(root))
      .filter((v) => v.rule === 'credential-brand')
      .map((v) => v.line);
    // import, ' + ' concatenation, template, upper case, join, Symbol.for(variable), getOwnPropertySymbols, Reflect.ownKeys, re-export
    expect(found).toEqual([2, 3, 4, 5, 6, 8, 10, 11, 12]);
  });

  it('catches objects built and typed as ReachCredential: annotation, cast, satisfies, return type, implements', () => {
    const root = fixture('violations');
    const found = checkCredential(readSourceTree(root))
      .filter((v) => v.rule === 'credential-construction')
      .map((v) => `${v.file}:${v.line}`);
    expect(found).toEqual(
      [3, 4, 5, 6, 9, 10].map((line) => `packages/plugin-approval/src/forge.ts:${line}`),
    );
  });

  it('allows the brand in api-reach and plugin-reach, and taking or checking a credential anywhere', () => {
    const root = fixture('clean');
    expect(checkCredential(readSourceTree(root))).toEqual([]);
  });
});
