import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import type { SandboxPolicy } from '@aalis/api-reach';
import { createLinuxSandbox } from '@aalis/sandbox-linux';
import { afterAll, describe, expect, it } from 'vitest';
import { reachPolicyWith } from './reach-policy.testing.js';

// With the XDG base directories set elsewhere than their home defaults (here inside the
// workspace, as a dotfiles checkout is), the tools read their start files and credentials there:
// each landing and credential under ~/.config, ~/.cache, ~/.local/share is one there too. Real
// sandboxed commands on the reach a daemon builds; each write below was committed before (h108
// found git's; nvim, fish, direnv, systemd, powerlevel10k and gh's token are the same class).
const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-xdg-')));
const home = join(root, 'home');
const ws = join(home, 'proj');
const dots = join(ws, 'dots');
const XDG = { XDG_CONFIG_HOME: join(dots, 'config'), XDG_CACHE_HOME: join(dots, 'cache'), XDG_DATA_HOME: join(dots, 'share') };
afterAll(() => rmSync(root, { recursive: true, force: true }));

const policyWith = (env: Record<string, string>) => reachPolicyWith({ root, home, ws, env });

const run = (policy: SandboxPolicy, script: string) =>
  createLinuxSandbox().run({ argv: ['sh', '-c', script], cwd: ws, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C' }, policy, timeoutMs: 20_000 });

describe('landings and credentials where the XDG base directories are set', { timeout: 90_000 }, () => {
  mkdirSync(join(dots, 'config', 'gh'), { recursive: true });
  mkdirSync(join(root, 'install'), { recursive: true });
  writeFileSync(join(dots, 'config', 'gh', 'hosts.yml'), 'github.com:\n  oauth_token: gho_SECRET\n');
  const LANDINGS = [
    'config/nvim/init.lua',
    'config/fish/conf.d/x.fish',
    'config/direnv/direnvrc',
    'config/systemd/user/x.service',
    'cache/p10k-instant-prompt-someone.zsh',
    'share/nvim/site/pack/x/start/p/plugin/x.lua',
  ];

  it.each(LANDINGS)('a command cannot write dots/%s', async (rel) => {
    const policy = await policyWith(XDG);
    const r = await run(policy, `mkdir -p "$(dirname dots/${rel})" && echo 'os.execute("id")' > dots/${rel}; echo ok > notes-${rel.replaceAll('/', '-')}.txt`);
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(join(dots, rel))).toBe(false);
    expect(readFileSync(join(ws, `notes-${rel.replaceAll('/', '-')}.txt`), 'utf8')).toBe('ok\n'); // the rest of the command's writes landed
  });

  it('without the variables set, the same files are ordinary workspace files', async () => {
    const policy = await policyWith({});
    const saved = Object.fromEntries(Object.keys(XDG).map((k) => [k, process.env[k]]));
    expect(Object.values(saved).every((v) => v === undefined || !v.startsWith(dots))).toBe(true);
    const r = await run(policy, 'mkdir -p dots/config/nvim && echo x > dots/config/nvim/init.lua');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(dots, 'config', 'nvim', 'init.lua'), 'utf8')).toBe('x\n');
    rmSync(join(dots, 'config', 'nvim'), { recursive: true });
  });

  it("gh's token under $XDG_CONFIG_HOME is hidden from the command", async () => {
    const policy = await policyWith(XDG);
    const r = await run(policy, 'cat dots/config/gh/hosts.yml; echo "exit=$?"');
    expect(r.stdout).not.toContain('gho_SECRET');
    expect(r.stdout).toMatch(/exit=[1-9]/);
    const open = await run(await policyWith({}), 'cat dots/config/gh/hosts.yml');
    expect(open.stdout).toContain('gho_SECRET'); // the same file is read where the variable does not name it
  });
});
