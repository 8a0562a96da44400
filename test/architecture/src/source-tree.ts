import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** One TypeScript source file of a workspace package. */
export interface SourceFile {
  /** The package's folder name under `packages/` (e.g. `api-reach`). */
  readonly pkg: string;
  /** Absolute path. */
  readonly path: string;
  /** Path relative to the tree root, with forward slashes, for messages. */
  readonly display: string;
  readonly text: string;
}

const SKIP = new Set(['node_modules', 'dist', '.turbo', 'coverage', 'fixtures', 'golden']);

/** Every `.ts`/`.mts`/`.cts`/`.tsx`/`.js`/`.mjs` file under `root/packages/<pkg>/`, fixtures and build output excluded. */
export function readSourceTree(root: string): SourceFile[] {
  const packagesDir = join(root, 'packages');
  const files: SourceFile[] = [];
  for (const pkg of readdirSync(packagesDir).sort()) {
    const dir = join(packagesDir, pkg);
    if (!statSync(dir).isDirectory()) continue;
    walk(dir, (path) => {
      files.push({ pkg, path, display: relative(root, path).split(sep).join('/'), text: readFileSync(path, 'utf8') });
    });
  }
  return files;
}

function walk(dir: string, visit: (path: string) => void): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP.has(entry.name)) walk(join(dir, entry.name), visit);
    } else if (/\.(c|m)?(t|j)sx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      visit(join(dir, entry.name));
    }
  }
}
