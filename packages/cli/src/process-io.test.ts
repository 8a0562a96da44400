import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * A plain fstat of a pipe is left in node's shared stat buffer, and node's next module resolution
 * then takes a symlinked package for a real folder and looks for its dependencies beside the
 * link (nodejs/node#51142). pnpm's layout is all such links: `aalis doctor | cat` found no execa
 * and said the linux sandbox did not work here. `processIo` stats stdout and stderr at every
 * command's start. Plain node runs it here (vitest's own resolver does not show the bug), on a
 * pnpm-like layout, with stdout a pipe.
 */
const dir = mkdtempSync(join(tmpdir(), 'aalis-process-io-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `a` linked from the app's node_modules into a store, its dependency `b` beside it there (pnpm's layout). */
function pnpmLikeApp(): string {
  const store = join(dir, 'store', 'a@1', 'node_modules');
  for (const [name, code] of [['a', "import b from 'b'; export default b;"], ['b', "export default 'b found';"]] as const) {
    mkdirSync(join(store, name), { recursive: true });
    writeFileSync(join(store, name, 'package.json'), JSON.stringify({ name, type: 'module', main: 'index.js' }));
    writeFileSync(join(store, name, 'index.js'), code);
  }
  const app = join(dir, 'app');
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  symlinkSync(join(store, 'a'), join(app, 'node_modules', 'a'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module' }));
  // this module as node runs it (its imports are node's own)
  const source = readFileSync(join(import.meta.dirname, 'process-io.ts'), 'utf8');
  writeFileSync(join(app, 'process-io.js'), ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
  return app;
}

describe('processIo and module resolution', () => {
  it('after processIo, a package linked the way pnpm links it still finds its dependency (stdout a pipe)', () => {
    const app = pnpmLikeApp();
    writeFileSync(join(app, 'main.js'), "import { processIo } from './process-io.js';\nprocessIo();\ntry { console.log((await import('a')).default); } catch (e) { console.log(e.message); }\n");
    const run = spawnSync(process.execPath, [join(app, 'main.js')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(run.stdout.trim(), run.stderr).toBe('b found');
  });
});
