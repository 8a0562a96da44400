import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import type { SandboxPolicy } from '@aalis/api-reach';
import { createLinuxSandbox } from '@aalis/sandbox-linux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachPolicyWith } from './reach-policy.testing.js';

// Project files that make a routine command run a program the file names: rustup's `path`
// toolchain (cargo, rustc and the editor's rust-analyzer start the folder's binaries), jj's
// repository config before its secure config, Sapling's repository config. Real sandboxed
// commands on the reach a daemon builds: each was committed before.
const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-toolchain-landings-')));
const home = join(root, 'home');
const ws = join(home, 'proj');
let policy: SandboxPolicy;

beforeAll(async () => {
  mkdirSync(ws, { recursive: true });
  mkdirSync(join(root, 'install'));
  policy = await reachPolicyWith({ root, home, ws });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('toolchain and VCS project files are landings', { timeout: 60_000 }, () => {
  it.each([
    ['rust-toolchain.toml', '[toolchain]\\npath = "/tmp/evil-toolchain"\\n'],
    ['sub/rust-toolchain', '[toolchain]\\npath = "/tmp/evil-toolchain"\\n'],
    ['.jj/repo/config.toml', '[ui]\\npager = "touch pwned"\\n'],
    ['.sl/config', '[hooks]\\npre-status = touch pwned\\n'],
  ])('a command cannot write %s; its other writes land', async (rel, content) => {
    const note = `note-${rel.replace(/[^a-z]/g, '')}.txt`;
    const r = await createLinuxSandbox().run({
      argv: ['sh', '-c', `mkdir -p "$(dirname '${rel}')" && printf '${content}' > '${rel}'; echo ok > ${note}`],
      cwd: ws,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C' },
      policy,
      timeoutMs: 20_000,
    });
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(join(ws, rel))).toBe(false);
    expect(readFileSync(join(ws, note), 'utf8')).toBe('ok\n');
  });
});
