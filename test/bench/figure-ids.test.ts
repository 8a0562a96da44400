import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchIdPatterns, readmeBenchRows } from './readme-markers.js';

const REPO = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(REPO, 'README.md'), 'utf8');

describe('every figure id the README names is recorded by the bench its row names', () => {
  const rows = readmeBenchRows(readme);

  it('finds the rows and their ids', () => {
    // the table of issues 13 and 17: ten rows of theirs, one of other figures
    expect(rows.length).toBeGreaterThanOrEqual(11);
    expect(rows.flatMap((r) => r.ids)).toContain('sandbox-linux.true-network-off');
    for (const row of rows) expect(row.files.length, `a row names no bench file: ${row.ids.join(', ')}`).toBeGreaterThan(0);
  });

  it.each(rows.flatMap((row) => row.ids.map((id) => [id, row.files] as const)))('%s', (id, files) => {
    const patterns = files.flatMap((file) => {
      const text = readFileSync(join(REPO, file), 'utf8');
      return text.includes('recordFigure(') ? benchIdPatterns(text) : [];
    });
    expect(patterns.some((p) => p.test(id)), `${id} is not recorded by ${files.join(' or ')} (no recordFigure with that id)`).toBe(true);
  });

  it('reads ids out of template literals, and nothing that is not an id', () => {
    // a bench's source text, with a placeholder spelled as the bench spells it
    const placeholder = '$' + '{name}';
    const patterns = benchIdPatterns(`recordFigure({ id: \`sandbox-linux.true-large-${placeholder}\` }); import x from 'node:fs'; const y = 'cli.startup-help';`);
    expect(patterns.map((p) => p.test('sandbox-linux.true-large-deep'))).toContain(true);
    expect(patterns.some((p) => p.test('cli.startup-help'))).toBe(true);
    expect(patterns.some((p) => p.test('cli.startup-exec'))).toBe(false);
    expect(patterns.some((p) => p.test('sandbox-linux.true-large-'))).toBe(false);
  });
});
