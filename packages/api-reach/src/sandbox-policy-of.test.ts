import { describe, expect, it } from 'vitest';
import { DATA, HOME, INSTALL, LISTS, PROJECT, reachInput, SESSION_TMP } from '../test/fixture.js';
import { ReachInputError } from './errors.js';
import { resolveReach } from './reach.js';
import type { SandboxGrants, SandboxPolicy } from './sandbox-policy.js';
import { sandboxPolicyAllows, sandboxPolicyOf } from './sandbox-policy-of.js';
import { sandboxStoreEnv } from './toolchain-caches.js';

const policy = (tier: 'readonly' | 'workspace', grants?: SandboxGrants, home = PROJECT) =>
  sandboxPolicyOf(resolveReach(reachInput('owner', tier, 'ask', { place: { home } })), grants);
const can = (p: SandboxPolicy, effect: 'read' | 'write', path: string) => sandboxPolicyAllows(p, effect, path, 'linux');

describe('sandboxPolicyOf', () => {
  it('lays the workspace tier out in the layers of the contract', () => {
    const p = policy('workspace');
    expect(p.readDeny).toEqual(LISTS.denyRead);
    expect(p.readAllowWithin).toEqual([SESSION_TMP]);
    expect(p.write.slice(0, 5)).toEqual([PROJECT, `${HOME}/extra`, `${HOME}/wt/feature`, `${PROJECT}/.git`, '/srv/repos/app.git']);
    expect(p.write).toContain(`${HOME}/.cache/aalis-sandbox`);
    expect(p.write).not.toContain(`${HOME}/.npm`);
    expect(p.writeDeny.slice(0, LISTS.landing.length)).toEqual(LISTS.landing);
    const nm = p.writeExceptions[0];
    expect(nm !== undefined && 'pattern' in nm && nm.pattern.startsWith(`^(?:${PROJECT}|`)).toBe(true);
    expect(p.controlDeny).toEqual(LISTS.control);
    expect(p.network).toBe('on');
    expect(p.localPorts).toEqual([7777]);
    expect(p.unixSockets).toEqual(p.write);
  });

  it('the readonly tier writes only the session temp and is offline unless network was granted', () => {
    const p = policy('readonly');
    expect(p.write).toEqual([SESSION_TMP]);
    expect(p.network).toBe('off');
    expect(policy('readonly', { network: true }).network).toBe('on');
    expect(p.unixSockets).toEqual([SESSION_TMP]);
  });

  it.each(['confirm', 'full'] as const)('throws for %s: it runs on the host', (tier) => {
    expect(() => sandboxPolicyOf(resolveReach(reachInput('owner', tier, 'ask')))).toThrow(ReachInputError);
    expect(() => sandboxPolicyOf(resolveReach(reachInput('owner', tier, 'ask')))).toThrow(/runs commands on the host/);
  });

  it('throws for a reach without local effect', () => {
    expect(() => sandboxPolicyOf(resolveReach(reachInput('other', 'workspace', 'ask')))).toThrow(/no local effect/);
  });

  it.each<[string, 'read' | 'write', string, boolean]>([
    ['the main directory', 'write', `${PROJECT}/src/a.ts`, true],
    ['a landing in it', 'write', `${PROJECT}/.git/hooks/pre-commit`, false],
    ['the .vscode directory itself', 'write', `${PROJECT}/.vscode`, false],
    ['a landing inside node_modules of a root', 'write', `${PROJECT}/node_modules/pkg/AGENTS.md`, true],
    ['a nested node_modules', 'write', `${PROJECT}/packages/a/node_modules/b/.husky/x`, true],
    ['a lookalike of node_modules', 'write', `${PROJECT}/node_modules_x/AGENTS.md`, false],
    ['git objects', 'write', `${PROJECT}/.git/objects/ab/cd`, true],
    ['out of range', 'write', `${HOME}/other/x`, false],
    ['the control plane', 'write', `${DATA}/plugins/x`, false],
    ["a toolchain cache: the sandbox's own (its tools are pointed there)", 'write', `${HOME}/.cache/aalis-sandbox/xdg/pip/x`, true],
    ["the host's pip cache (its wheels run at the host's next install)", 'write', `${HOME}/.cache/pip/x`, false],
    ["black's cache on the host (pickles it loads)", 'write', `${HOME}/.cache/black/24.1/cache.pickle`, false],
    ["cargo's downloaded crates on the host (unpacked without a check)", 'write', `${HOME}/.cargo/registry/cache/i/serde-1.0.0.crate`, false],
    ["pnpm's store, hard-linked into node_modules", 'write', `${HOME}/.local/share/pnpm/store/v11/files/ab/cd`, false],
    ["bun's cache, hard-linked into node_modules", 'write', `${HOME}/.bun/install/cache/x`, false],
    ["the sandbox's own pnpm store", 'write', `${HOME}/.cache/aalis-sandbox/pnpm-store/v11/files/ab/cd`, true],
    ['npx packages', 'write', `${HOME}/.npm/_npx/abc/node_modules/x/cli.js`, false],
    ["npm's content cache on the host (its index names what an install takes)", 'write', `${HOME}/.npm/_cacache/index-v5/x`, false],
    ["the sandbox's own npm cache", 'write', `${HOME}/.cache/aalis-sandbox/npm/_cacache/index-v5/x`, true],
    ["powerlevel10k's instant prompt", 'write', `${HOME}/.cache/p10k-instant-prompt-ada.zsh`, false],
    ['a hook repository of pre-commit', 'write', `${HOME}/.cache/pre-commit/repo1/hook.py`, false],
    ['a credential', 'read', `${HOME}/.ssh/id_rsa`, false],
    ['.env in the session temp', 'read', `${SESSION_TMP}/.env`, true],
    ["another session's temp", 'read', `${DATA}/tmp/s2/x`, false],
    ['.env in the project', 'read', `${PROJECT}/.env`, false],
    ['an ordinary file', 'read', '/etc/hosts', true],
  ])('workspace: %s (%s) → %s', (_name, effect, path, expected) => {
    expect(can(policy('workspace'), effect, path)).toBe(expected);
  });

  // The node_modules exception lifts only landings that lie inside a node_modules directory.
  it.each<[string, string, boolean, string?]>([
    ['a package file', `${PROJECT}/node_modules/pkg/index.js`, true],
    ["a package's AGENTS.md", `${PROJECT}/node_modules/pkg/AGENTS.md`, true],
    ["a package's workflow", `${PROJECT}/node_modules/pkg/.github/workflows/ci.yml`, true],
    ["a package's .husky under a nested node_modules", `${PROJECT}/a/node_modules/b/node_modules/c/.husky/x`, true],
    ["a git dependency's HEAD inside its .git", `${PROJECT}/node_modules/pkg/.git/HEAD`, true],
    ['node_modules under .git/hooks', `${PROJECT}/.git/hooks/node_modules/x`, false],
    ['node_modules under .husky', `${PROJECT}/.husky/node_modules/x/y`, false],
    ['node_modules under a git directory outside the project', '/srv/repos/app.git/hooks/node_modules/x', false],
    ['a bare-repository HEAD disguise in node_modules', `${PROJECT}/node_modules/pkg/HEAD`, false],
    ["a package's .git hooks", `${PROJECT}/node_modules/pkg/.git/hooks/post-checkout`, false],
    ["a package's .git config", `${PROJECT}/node_modules/pkg/.git/config`, false],
    ['node_modules under self/, the workspace at home', `${DATA}/self/skills/node_modules/x/y.md`, false, HOME],
    ['node_modules under ~/.config/nvim, the workspace at home', `${HOME}/.config/nvim/node_modules/x.lua`, false, HOME],
    ['node_modules under ~/.npm/_npx, a toolchain cache', `${HOME}/.npm/_npx/abc/node_modules/x/cli.js`, false],
    ['node_modules in the workspace at home', `${HOME}/app/node_modules/pkg/AGENTS.md`, true, HOME],
  ])('node_modules exception: %s → %s', (_name, path, expected, home) => {
    expect(can(policy('workspace', undefined, home ?? PROJECT), 'write', path)).toBe(expected);
  });

  it('the node_modules exception keeps extra landing patterns from config above node_modules', () => {
    const lists = { ...LISTS, landing: [...LISTS.landing, { pattern: '^/srv/tools(?:/.*)?$|^.*/\\.taskrc$' }] };
    const p = sandboxPolicyOf(resolveReach(reachInput('owner', 'workspace', 'ask', { lists, place: { home: '/srv' } })));
    expect(can(p, 'write', '/srv/tools/node_modules/x')).toBe(false);
    expect(can(p, 'write', '/srv/app/node_modules/x/.taskrc')).toBe(true);
    expect(can(p, 'write', '/srv/app/node_modules/x/y')).toBe(true);
  });

  it("the linked stores stay denied even with the workspace at home, and sandboxStoreEnv points into a writable cache", () => {
    const p = policy('workspace', undefined, HOME);
    expect(can(p, 'write', `${HOME}/.local/share/pnpm/store/v11/files/ab/cd`)).toBe(false);
    expect(can(p, 'write', `${HOME}/notes.txt`)).toBe(true);
    const env = sandboxStoreEnv(HOME, 'linux');
    expect(Object.keys(env).sort()).toEqual(['BUN_INSTALL_CACHE_DIR', 'UV_CACHE_DIR', 'XDG_CACHE_HOME', 'YARN_CACHE_FOLDER', 'YARN_GLOBAL_FOLDER', 'npm_config_cache', 'pnpm_config_store_dir']);
    for (const dir of Object.values(env)) {
      expect(dir).toBeDefined();
      expect(can(policy('workspace'), 'write', `${dir}/v11/files/x`)).toBe(true);
    }
  });

  it('the control plane stays denied inside a writable root and its node_modules', () => {
    const p = policy('workspace', undefined, INSTALL);
    expect(can(p, 'write', `${INSTALL}/packages/core/src/x.ts`)).toBe(true);
    expect(can(p, 'write', `${INSTALL}/packages/core/dist/x.js`)).toBe(false);
    expect(can(p, 'write', `${INSTALL}/node_modules/zod/index.js`)).toBe(false);
    expect(can(p, 'write', `${INSTALL}/packages/core/node_modules/zod/index.js`)).toBe(false);
  });

  it('writePaths join the roots without releasing the landings under them', () => {
    const p = policy('workspace', { writePaths: ['/srv/out'] });
    expect(p.write).toContain('/srv/out');
    expect(can(p, 'write', '/srv/out/report.txt')).toBe(true);
    expect(can(p, 'write', '/srv/out/.git/config')).toBe(false);
    expect(can(p, 'write', '/srv/out/AGENTS.md')).toBe(false);
    expect(can(p, 'write', '/srv/out/node_modules/x/AGENTS.md')).toBe(false);
    expect(p.unixSockets).toContain('/srv/out');
  });

  it('landingPaths release exactly that path, nothing under it', () => {
    const p = policy('workspace', { landingPaths: [`${PROJECT}/.husky`, `${HOME}/.bashrc`] });
    expect(can(p, 'write', `${PROJECT}/.husky`)).toBe(true);
    expect(can(p, 'write', `${PROJECT}/.husky/pre-commit`)).toBe(false);
    expect(can(p, 'write', `${HOME}/.bashrc`)).toBe(true);
    expect(can(p, 'write', `${HOME}/.zshrc`)).toBe(false);
  });

  it('the control plane cannot be granted', () => {
    const p = policy('workspace', { writePaths: [`${DATA}/plugins`, `${INSTALL}/node_modules`], landingPaths: [`${DATA}/config.yaml`] });
    expect(can(p, 'write', `${DATA}/plugins/x`)).toBe(false);
    expect(can(p, 'write', `${INSTALL}/node_modules/x`)).toBe(false);
    expect(can(p, 'write', `${DATA}/config.yaml`)).toBe(false);
  });

  it('refuses relative grants', () => {
    expect(() => policy('workspace', { writePaths: ['out'] })).toThrow(/a granted write path 'out' is not an absolute path/);
  });
});
