import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findBrokenLinks, headingAnchor } from './src/markdown-links.js';

const repo = join(import.meta.dirname, '..', '..');

describe('links between the documents', () => {
  it('every relative link in a markdown file leads to a file, and an anchor to one of its headings', () => {
    const broken = findBrokenLinks(repo).filter((b) => !b.file.startsWith('test/architecture/fixtures/'));
    expect(broken).toEqual([]);
  });

  it('catches a missing file and a missing heading, and follows neither web links nor examples', () => {
    const found = findBrokenLinks(join(import.meta.dirname, 'fixtures', 'violations')).map((b) => `${b.file}:${b.line} ${b.problem}`);
    expect(found).toEqual(['docs/links.md:6 no-file', 'docs/links.md:7 no-heading']);
  });

  it.each([
    ['Threat notes (kernel, uid, pids, `/tmp`, sockets)', 'threat-notes-kernel-uid-pids-tmp-sockets'],
    ['The run request (`run-request.ts`, `parse-run-request.ts`)', 'the-run-request-run-requestts-parse-run-requestts'],
    ['What is tested (`pnpm vitest run --project @aalis/sandbox-linux`)', 'what-is-tested-pnpm-vitest-run---project-aalissandbox-linux'],
  ])('anchors a heading as the repository host does: %s', (heading, anchor) => {
    expect(headingAnchor(heading)).toBe(anchor);
  });
});
