import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SandboxPolicy, sandboxPolicyAllows } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachPolicyOf } from './reach-policy.testing.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

// The landing table as the sandbox enforces it, with the policy built the way the reach plugin
// builds it (protectedLists → resolveReach → sandboxPolicyOf), for a workspace-tier session in
// the scene's workspace with the toolchain caches writable.
const sb = createLinuxSandbox();
let s: Scene;
let policy: SandboxPolicy;

beforeAll(() => {
  s = makeScene();
  policy = reachPolicyOf(s);
});
afterAll(() => s.cleanup());

/** Runs `mkdir -p <dir> && echo planted > <path>` in the sandbox. */
const plant = (path: string) => sb.run(req(s, ['sh', '-c', 'mkdir -p "$(dirname "$1")" && echo planted > "$1"', 'sh', path], { policy }));

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
  ])('a new %s in the workspace is refused', async (rel) => {
    const path = join(s.ws, rel);
    expect(sandboxPolicyAllows(policy, 'write', path, 'linux')).toBe(false);
    const r = await plant(path);
    expect(r.exitCode).not.toBe(0);
    expect(existsSync(path)).toBe(false);
  });

  it("the executing parts of toolchain caches are refused while the caches' content stays writable", async () => {
    const npx = join(s.home, '.npm/_npx/abc/node_modules/x/cli.js');
    const prompt = join(s.home, '.cache/p10k-instant-prompt-ada.zsh');
    const store = join(s.home, '.npm/_cacache/index-v5/x');
    expect(sandboxPolicyAllows(policy, 'write', npx, 'linux')).toBe(false);
    expect((await plant(npx)).exitCode).not.toBe(0);
    expect(existsSync(join(s.home, '.npm/_npx/abc'))).toBe(false);
    expect((await plant(prompt)).exitCode).not.toBe(0);
    expect(existsSync(prompt) && readFileSync(prompt, 'utf8').includes('planted')).toBe(false);
    expect((await plant(store)).exitCode).toBe(0);
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
});
