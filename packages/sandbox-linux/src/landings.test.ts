import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SandboxPolicy, type SandboxRunResult, sandboxPolicyAllows } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachPolicyOf } from './reach-policy.testing.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

// The landing table as the sandbox enforces it, with the policy built the way the reach plugin
// builds it (protectedLists → resolveReach → sandboxPolicyOf), for a workspace-tier session in
// the scene's workspace with the toolchain caches writable.
// Under the look each landing is refused while the command runs (a placeholder, a read-only
// mount); under the overlay it is written into the upper layer and refused at the commit. Either
// way it never reaches the host and the run reports it.
const MODELS = ['look', 'overlay'] as const;
const sandboxes = { look: createLinuxSandbox({ hostModel: 'look' }), overlay: createLinuxSandbox({ hostModel: 'overlay' }) };
let s: Scene;
let policy: SandboxPolicy;

beforeAll(() => {
  s = makeScene();
  policy = reachPolicyOf(s);
});
afterAll(() => s.cleanup());

/** Runs `mkdir -p <dir> && echo planted > <path>` in the sandbox. */
const plant = (path: string, model: (typeof MODELS)[number] = 'overlay') =>
  sandboxes[model].run(req(s, ['sh', '-c', 'mkdir -p "$(dirname "$1")" && echo planted > "$1"', 'sh', path], { policy }));

/** The run refused `path`: at once under the look (the command failed), at the commit under the overlay (reported by path or an ancestor). */
function expectRefused(r: SandboxRunResult, path: string, model: (typeof MODELS)[number]): void {
  if (model === 'look') expect(r.exitCode).not.toBe(0);
  else {
    expect(r.writeDenied).toBe(true);
    expect(r.deniedWrites.some((p) => path === p || path.startsWith(`${p}/`))).toBe(true);
  }
  expect(existsSync(path)).toBe(false);
}

describe('the landings of the table, enforced by the kernel', { timeout: 120_000 }, () => {
  it.each([
    ['.github/workflows/ci.yml'],
    ['CLAUDE.md'],
    ['.gemini/settings.json'],
    ['.devcontainer/devcontainer.json'],
    ['.idea/workspace.xml'],
    ['lefthook.yml'],
    ['mise.toml'],
    ['.mise.toml'],
  ].flatMap(([rel]) => MODELS.map((model) => [rel!, model] as const)))('a new %s in the workspace is refused (%s model)', async (rel, model) => {
    const path = join(s.ws, rel);
    expect(sandboxPolicyAllows(policy, 'write', path, 'linux')).toBe(false);
    expectRefused(await plant(path, model), path, model);
  });

  // since 2026-12-05 the host's caches are not writable at all (what was planted in their content
  // stores ran too: cargo's .crate, npm's index); the sandbox's own cache home is
  it.each(MODELS)("the executing parts of toolchain caches are refused, and so are the host's caches' content stores; the sandbox's own cache is writable (%s model)", async (model) => {
    const npx = join(s.home, '.npm/_npx/abc/node_modules/x/cli.js');
    const prompt = join(s.home, '.cache/p10k-instant-prompt-ada.zsh');
    const hostStore = join(s.home, `.npm/_cacache/index-v5/${model}`);
    expect(sandboxPolicyAllows(policy, 'write', hostStore, 'linux')).toBe(false);
    expect((await plant(hostStore, model)).exitCode).not.toBe(0);
    expect(existsSync(hostStore)).toBe(false);
    const store = join(s.home, `.cache/aalis-sandbox/npm/_cacache/index-v5/${model}`);
    expect(sandboxPolicyAllows(policy, 'write', npx, 'linux')).toBe(false);
    expectRefused(await plant(npx, model), npx, model);
    expect(existsSync(join(s.home, '.npm/_npx/abc'))).toBe(false);
    const p10k = await plant(prompt, model);
    if (model === 'look') expect(p10k.exitCode).not.toBe(0);
    else expect(p10k.deniedWrites).toContain(prompt);
    expect(existsSync(prompt) && readFileSync(prompt, 'utf8').includes('planted')).toBe(false);
    expect((await plant(store, model)).exitCode).toBe(0);
    expect(readFileSync(store, 'utf8')).toBe('planted\n');
  });

  it('an existing ~/.npm/_npx is read-only, its packages unchanged', async () => {
    const cli = join(s.home, '.npm/_npx/def/node_modules/y/cli.js');
    mkdirSync(join(cli, '..'), { recursive: true });
    writeFileSync(cli, 'original\n');
    expect((await plant(cli)).exitCode).not.toBe(0);
    expect(readFileSync(cli, 'utf8')).toBe('original\n');
  });

  it('node_modules under .git/hooks is not lifted by the node_modules exception', async () => {
    mkdirSync(join(s.ws, '.git/hooks/node_modules'), { recursive: true });
    const path = join(s.ws, '.git/hooks/node_modules/x');
    expect(sandboxPolicyAllows(policy, 'write', path, 'linux')).toBe(false);
    const r = await plant(path);
    expect(r.exitCode).not.toBe(0);
    expect(existsSync(path)).toBe(false);
  });

  it("a package's landing-like file inside node_modules stays writable", async () => {
    mkdirSync(join(s.ws, 'node_modules/pkg'), { recursive: true });
    const path = join(s.ws, 'node_modules/pkg/AGENTS.md');
    const r = await plant(path);
    expect(r.exitCode).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('planted\n');
  });

  // found by an attack (h104): `.cargo/config.toml` was a landing but `.cargo` was not, so a symlink
  // `.cargo -> docs` beside an ordinary docs/config.toml (a rustc-wrapper) was committed, and the
  // next host `cargo build` ran the wrapper it names
  it('a symlink named .cargo (to a folder holding a config.toml) is refused; the folder it points at stays writable', async () => {
    for (const model of MODELS) {
      const dir = join(s.ws, `cargo-${model}`);
      mkdirSync(dir);
      const r = await sandboxes[model].run(req(s, ['sh', '-c', 'mkdir docs; printf "[build]\\nrustc-wrapper = \\"/tmp/x\\"\\n" > docs/config.toml; ln -s docs .cargo'], { policy, cwd: dir }));
      expect(existsSync(join(dir, '.cargo')), `${model}: ${r.stderr}`).toBe(false);
      if (model === 'overlay') expect(r.writeDenied).toBe(true);
      expect(readFileSync(join(dir, 'docs', 'config.toml'), 'utf8')).toContain('rustc-wrapper');
    }
  });
});
