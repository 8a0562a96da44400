import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sandboxStoreEnv, toolchainCacheDirs } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachPolicyOf } from './reach-policy.testing.js';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const sb = createLinuxSandbox();
let s: Scene;
const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();

const wheel = () => join(s.root, 'aalispkg-1.0-py3-none-any.whl');
const WHEEL_PY = `
import sys, zipfile
files = {
  'aalispkg/__init__.py': 'VALUE = "installed"\\n',
  'aalispkg-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: aalispkg\\nVersion: 1.0\\n',
  'aalispkg-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: hand\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
}
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for name, text in files.items():
        z.writestr(name, text)
    z.writestr('aalispkg-1.0.dist-info/RECORD', ''.join(n + ',,\\n' for n in files) + 'aalispkg-1.0.dist-info/RECORD,,\\n')
`;

beforeAll(() => {
  s = makeScene();
});
afterAll(() => s.cleanup());

/**
 * The workspace tier with the toolchain-cache allow list of the spec (api-reach's
 * `toolchainCacheDirs`) as writable roots. `pip install --user` also needs the user site and its
 * scripts folder, which that list does not have: added here, and reported upstream.
 */
function installPolicy() {
  const caches = toolchainCacheDirs(s.home, 'linux');
  const pipUser = [join(s.home, '.local/lib'), join(s.home, '.local/bin')];
  const base = workspacePolicy(s);
  return workspacePolicy(s, { write: [...base.write, ...caches, ...pipUser], unixSockets: [...base.unixSockets] });
}

describe('toolchain caches writable in the workspace tier', { timeout: 120_000 }, () => {
  it('pnpm install of a local tarball succeeds inside the sandbox (offline)', async () => {
    const dep = join(s.root, 'dep');
    mkdirSync(dep);
    writeFileSync(join(dep, 'package.json'), JSON.stringify({ name: 'aalis-local-dep', version: '1.0.0', main: 'index.js' }));
    writeFileSync(join(dep, 'index.js'), 'module.exports = 42;\n');
    execFileSync('npm', ['pack', '--silent', '--pack-destination', s.ws], { cwd: dep, stdio: 'ignore' });
    writeFileSync(join(s.ws, 'package.json'), JSON.stringify({ name: 'ws', private: true, dependencies: { 'aalis-local-dep': 'file:./aalis-local-dep-1.0.0.tgz' } }));
    // the environment the reach plugin gives sandboxed commands: pnpm's store of their own
    const env = { PATH: process.env.PATH!, HOME: s.home, LANG: 'C', CI: 'true', npm_config_update_notifier: 'false', ...sandboxStoreEnv(s.home, 'linux') };
    const r = await sb.run(req(s, ['pnpm', 'install', '--offline', '--config.confirmModulesPurge=false'], { env, policy: reachPolicyOf(s), timeoutMs: 60_000 }));
    expect(r.stderr + r.stdout).not.toMatch(/EROFS|Read-only file system/);
    expect(r.exitCode).toBe(0);
    const check = await sb.run(req(s, ['node', '-e', "console.log(require('aalis-local-dep'))"], { env }));
    expect(check.stdout.trim()).toBe('42');
    expect(existsSync(join(s.home, '.cache/aalis-sandbox/pnpm-store'))).toBe(true);
    expect(existsSync(join(s.home, '.local/share/pnpm/store'))).toBe(false);
  });

  it("a write to pnpm's store is refused: its files are the protected node_modules' inodes", async () => {
    const installed = join(s.root, 'install/node_modules/zod/index.js');
    const stored = join(s.home, '.local/share/pnpm/store/v11/files/ab/cdef-index.js');
    mkdirSync(dirname(installed), { recursive: true });
    mkdirSync(dirname(stored), { recursive: true });
    writeFileSync(installed, 'module.exports = "original";\n');
    linkSync(installed, stored);
    const policy = reachPolicyOf(s);
    for (const argv of [
      ['sh', '-c', 'echo "module.exports = 1;" > "$1"', 'sh', stored],
      ['sh', '-c', 'echo "module.exports = 1;" >> "$1"', 'sh', stored],
      ['truncate', '-s', '0', stored],
      ['sh', '-c', 'rm -f "$1" && echo x > "$1"', 'sh', stored],
    ] as [string, ...string[]][]) {
      const r = await sb.run(req(s, argv, { policy }));
      expect(r.exitCode, argv.join(' ')).not.toBe(0);
    }
    expect(readFileSync(installed, 'utf8')).toBe('module.exports = "original";\n');
    expect(statSync(stored).ino).toBe(statSync(installed).ino);
  });

  it('pip install --user of a local package succeeds inside the sandbox', async () => {
    // a wheel written by hand (a zip with metadata), so no build backend is needed offline
    execFileSync(python, ['-c', WHEEL_PY, wheel()]);
    const env = { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C', PIP_DISABLE_PIP_VERSION_CHECK: '1', ...sandboxStoreEnv(s.home, 'linux') };
    const r = await sb.run(req(s, [python, '-m', 'pip', 'install', '--user', '--no-index', wheel()], { env, policy: installPolicy(), timeoutMs: 90_000 }));
    expect(r.stderr).not.toMatch(/EROFS|Read-only file system/);
    expect(r.exitCode).toBe(0);
    const check = await sb.run(req(s, [python, '-c', 'import aalispkg; print(aalispkg.VALUE)'], { env }));
    expect(check.stdout.trim()).toBe('installed');
  });

  it("the host's caches are not written: a sandboxed command's tools cache in the sandbox's own, and a plant in the host's is refused", async () => {
    // what a sandboxed command planted in the host's caches ran on the host later: cargo unpacks a
    // .crate it finds, black loads its pickles, corepack runs the pnpm it finds (attacks, 2026-12-05)
    const env = { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C', ...sandboxStoreEnv(s.home, 'linux') };
    const plants = ['.cache/black/24.1.0/cache.pickle', '.cargo/registry/cache/index/evil-1.0.0.crate', '.npm/_cacache/index-v5/ab/cd', '.cache/node/corepack/v1/pnpm/9.0.0/bin/pnpm.cjs'];
    const r = await sb.run(req(s, ['sh', '-c', `for p in ${plants.join(' ')}; do mkdir -p "$HOME/$(dirname $p)" 2>/dev/null; echo planted > "$HOME/$p" 2>/dev/null && echo "wrote $p"; done; mkdir -p "$XDG_CACHE_HOME/pip" && echo ok > "$XDG_CACHE_HOME/pip/x" && echo own-cache`], { env, policy: reachPolicyOf(s) }));
    expect(r.stdout).toBe('own-cache\n');
    for (const p of plants) expect(existsSync(join(s.home, p)), p).toBe(false);
    expect(readFileSync(join(s.home, '.cache/aalis-sandbox/xdg/pip/x'), 'utf8')).toBe('ok\n');
  });

  it('without the allow list the same install is refused, and the refusal is detected', async () => {
    const env = { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C', PIP_DISABLE_PIP_VERSION_CHECK: '1' };
    const r = await sb.run(req(s, [python, '-m', 'pip', 'install', '--user', '--no-index', '--force-reinstall', wheel()], { env, timeoutMs: 90_000 }));
    expect(r.exitCode).not.toBe(0);
    expect(r.writeDenied).toBe(true);
  });
});
