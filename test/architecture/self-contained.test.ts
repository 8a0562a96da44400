import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findOutsideCitations } from './src/outside-citations.js';

const repo = join(import.meta.dirname, '..', '..');
const here = 'test/architecture';
// The rule's own source spells out what it looks for; the fixture breaks it on purpose.
const SKIP = [`${here}/src/outside-citations.ts`, `${here}/fixtures`];

describe('the repository stands on its own', () => {
  it('no file cites the design page, the specification documents or a folder outside the repository', () => {
    expect(findOutsideCitations(repo, SKIP)).toEqual([]);
  });

  it('catches each way of citing them, and not numbers that look alike', () => {
    const found = findOutsideCitations(join(import.meta.dirname, 'fixtures', 'violations')).map((c) => `${c.file}:${c.line} ${c.cites}`);
    expect(found).toEqual([
      'docs/cites-outside.md:3 the design page',
      'docs/cites-outside.md:4 the design page',
      'docs/cites-outside.md:5 the shared folder',
      'docs/cites-outside.md:6 the seeds folder',
      'docs/cites-outside.md:7 a specification file by name',
      'docs/cites-outside.md:8 a specification section by number',
    ]);
  });
});
