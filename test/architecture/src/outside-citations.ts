import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * What the repository must not cite, because it is not in the repository: the design page and
 * the specification documents it was first written from, and the folder they were kept in.
 * docs/ says the same things in the project's own words.
 */
export const OUTSIDE_CITATIONS = [
  { name: 'the design page', pattern: /\bDESIGN(?:\.md|'s)?\b/ },
  { name: 'the shared folder', pattern: /(?:\.\.\/|\/work\/)shared\b/ },
  { name: 'the seeds folder', pattern: /\bseeds\// },
  { name: 'a specification file by name', pattern: /\b00[0-9]_(?:[0-9a-f]{4,}|…)/ },
  // Section numbers of those documents ("§4.8.1", "003 §6"): a reader of the repository cannot look them up.
  { name: 'a specification section by number', pattern: /§\s*\d/ },
] as const;

/** One citation of something outside the repository. */
export interface OutsideCitation {
  readonly file: string;
  readonly line: number;
  readonly cites: (typeof OUTSIDE_CITATIONS)[number]['name'];
  readonly text: string;
}

const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'docs-site', '.turbo']);
const TEXT_FILE = /\.(?:[cm]?[jt]sx?|md|json|ya?ml|sh|txt|toml)$|^\.?[A-Za-z]+rc$|^Dockerfile$/;

function textFiles(root: string, dir: string, skip: ReadonlySet<string>, out: string[]): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(root, path);
    if (skip.has(rel)) continue;
    if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) textFiles(root, path, skip, out);
    else if (entry.isFile() && TEXT_FILE.test(entry.name)) out.push(path);
  }
  return out;
}

/**
 * Every line under `root` (its text files, dependencies and build output left out) that cites a
 * path outside the repository. `skip` lists paths relative to `root` not to look at: the rule's
 * own source, which must spell out what it looks for, and fixtures made to break it.
 */
export function findOutsideCitations(root: string, skip: readonly string[] = []): OutsideCitation[] {
  const found: OutsideCitation[] = [];
  for (const path of textFiles(root, root, new Set(skip), []).sort()) {
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.forEach((text, i) => {
      for (const { name, pattern } of OUTSIDE_CITATIONS) {
        if (pattern.test(text)) found.push({ file: relative(root, path), line: i + 1, cites: name, text: text.trim() });
      }
    });
  }
  return found;
}
