#!/usr/bin/env node
// `pnpm aalis …` in a source checkout: runs the built CLI, as users get it, building the workspace's
// packages first when any source is newer than the last build (and saying so). Not published.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');
const stamp = join(root, 'packages', 'cli', 'dist', '.built');

/** The newest modification time of what a build reads: sources, package and tsconfig files. */
function newestSource() {
  let newest = statSync(join(root, 'tsconfig.base.json')).mtimeMs;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'fixtures' && entry.name !== 'node_modules') walk(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        newest = Math.max(newest, statSync(path).mtimeMs);
      }
    }
  };
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const dir = join(root, 'packages', pkg);
    for (const file of ['package.json', 'tsconfig.build.json']) if (existsSync(join(dir, file))) newest = Math.max(newest, statSync(join(dir, file)).mtimeMs);
    if (existsSync(join(dir, 'src'))) walk(join(dir, 'src'));
  }
  return newest;
}

const builtAt = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (builtAt < newestSource()) {
  process.stderr.write(builtAt === 0 ? 'aalis: building the packages once (pnpm build)…\n' : 'aalis: sources changed since the last build, rebuilding (pnpm build)…\n');
  const started = Date.now();
  const turbo = join(root, 'node_modules', '.bin', 'turbo');
  const build = spawnSync(turbo, ['run', 'build', '--filter=@aalis/cli...', '--output-logs=errors-only', '--log-prefix=none'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (build.status !== 0) {
    process.stderr.write("aalis: the build failed (above), so nothing ran. Fix the error, or run 'pnpm build' to see it whole.\n");
    process.exit(1);
  }
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  process.stderr.write(`aalis: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

// `pnpm aalis …` runs in the repository root; the person meant the folder they were in.
if (process.env.npm_lifecycle_event === 'aalis' && process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);
await import('../bin/aalis.cjs');
