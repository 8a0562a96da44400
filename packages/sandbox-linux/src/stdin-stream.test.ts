import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';
import { sharedOverlaySandbox } from './launcher-scene.testing.js';
import { type OverlayScene, overlayScene, req } from './scene.testing.js';
import type { LinuxSandbox } from './service.js';
import { bytes, eof, neverReads, STDIN_EXPECTED, twoTimes } from './stdin.scenarios.testing.js';

/*
 * A command's stdin fed while it runs (api-reach's StdinStream): lines written at two times with
 * the command's answer seen between them, EOF, bytes that are not UTF-8, a command that never
 * reads (bounded, then killed with input pending); by a root daemon (through the launcher), by a
 * prepared sandbox, and by nobody.
 */

const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)('live stdin, root daemon', { timeout: 120_000 }, () => {
  let s: OverlayScene;
  let sb: LinuxSandbox;
  sharedOverlaySandbox((scene, sandbox) => {
    s = scene;
    sb = sandbox;
  });

  it('two lines written at two times, the second made from what the command did after the first', async () => {
    expect(await twoTimes(sb, s, s.tmpDir)).toEqual(STDIN_EXPECTED.twoTimes);
  });
  it('ending the input ends cat', async () => {
    expect(await eof(sb, s)).toEqual(STDIN_EXPECTED.eof);
  });
  it('bytes that are not UTF-8 pass through as they are', async () => {
    expect(await bytes(sb, s)).toEqual(STDIN_EXPECTED.bytes);
  });
  it('a command that never reads: writes refused at the bound; killed with input pending, the input is closed', async () => {
    expect(await neverReads(sb, s)).toEqual(STDIN_EXPECTED.neverReads);
  });

  it('through a prepared sandbox: the shim takes its payload, the command the live rest', async () => {
    const tmpDir = join(s.root, 'prepared-tmp');
    mkdirSync(tmpDir);
    const warm = s.sandbox({ tmpDir, prepare: 'on' });
    try {
      await warm.run(req(s, ['true']));
      await warm.preparationsSettled();
      const before = warm.preparedCounts().used;
      expect(await twoTimes(warm, s, tmpDir)).toEqual(STDIN_EXPECTED.twoTimes);
      expect(warm.preparedCounts().used).toBe(before + 1);
      await warm.preparationsSettled();
      expect(await eof(warm, s)).toEqual(STDIN_EXPECTED.eof);
      expect(warm.preparedCounts().used).toBe(before + 2);
    } finally {
      await warm.close();
    }
  });
});

const child = join(import.meta.dirname, 'stdin.child.testing.ts');
const able = canRunAsNobody(child);

describe.skipIf(!able)('live stdin, as nobody', { timeout: 120_000 }, () => {
  let s: OverlayScene;
  beforeAll(async () => {
    s = await overlayScene();
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
  });
  afterAll(() => s?.cleanup());

  it('the same scenarios answer the same', async () => {
    const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, JSON.stringify(s), s.tmpDir);
    const r = await execa(cmd!, args, { cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' }, extendEnv: false, reject: false, timeout: 100_000 });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(STDIN_EXPECTED);
  });
});
