import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** A relative link in a markdown file that leads nowhere: no such file, or no such heading. */
export interface BrokenLink {
  readonly file: string;
  readonly line: number;
  readonly link: string;
  readonly problem: 'no-file' | 'no-heading';
}

const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'docs-site', '.turbo']);

function markdownFiles(dir: string, out: string[]): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) markdownFiles(path, out);
    else if (entry.isFile() && entry.name.endsWith('.md')) out.push(path);
  }
  return out;
}

/** The anchor a heading gets where the repository is read: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of withoutCode(readFileSync(path, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) anchors.add(headingAnchor(heading[1]!));
  }
  return anchors;
}

/** The file's lines with fenced code blocks blanked, so a link inside an example is not followed. */
function withoutCode(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/**
 * Every relative link (`[text](path#anchor)`) in the markdown files under `root` that does not
 * lead to an existing file, or to a heading of it. Links with a scheme (`https:`) are not followed.
 */
export function findBrokenLinks(root: string): BrokenLink[] {
  const broken: BrokenLink[] = [];
  for (const file of markdownFiles(root, []).sort()) {
    withoutCode(readFileSync(file, 'utf8')).forEach((text, i) => {
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = match[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? file : resolve(dirname(file), path);
        const at = { file: relative(root, file), line: i + 1, link };
        if (!existsSync(target)) broken.push({ ...at, problem: 'no-file' });
        else if (anchor !== undefined && anchor !== '' && statSync(target).isFile() && !anchorsOf(target).has(anchor)) broken.push({ ...at, problem: 'no-heading' });
      }
    });
  }
  return broken;
}
