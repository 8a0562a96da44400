// A hidden host socket whose directory vanishes between the scan and the mount that hides it:
// bwrap cannot make the mount point of the empty file ("Can't mkdir parents for …/count.sock"; a
// daemon call once failed with it in a full bench), nor can the root map's step, which hides it in
// bwrap's place for a root daemon (premount.ts: "cannot hide the file …", launch-chain.test.ts).
// Nothing ran, and a fresh scan no longer lists it (its directory is gone), so the run is tried
// again and succeeds. With the retry taken out this fails with that message.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OverlayScene, overlayScene, req } from './scene.testing.js';
import { findExecutable } from './tools.js';

const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)("a hidden socket's directory removed between the scan and bwrap's set-up", { timeout: 120_000 }, () => {
  let s: OverlayScene;
  let server: Server;
  let sockDir: string;
  beforeAll(async () => {
    s = await overlayScene();
    // outside the workspace and the home: hidden (the empty file over it)
    sockDir = join(TEST_SCRATCH, `aalis-vanishing-socket-${process.pid}`);
    mkdirSync(sockDir, { recursive: true });
    server = createServer();
    await new Promise<void>((r) => server.listen(join(sockDir, 'count.sock'), r));
  });
  afterAll(() => {
    server?.close();
    rmSync(sockDir, { recursive: true, force: true });
    s?.cleanup();
  });

  it('is tried again with a fresh scan and runs', async () => {
    // a program that removes the socket's directory once, before it mounts: after the scan that found
    // it (a run's bwrap or root map step, which has the setup sync fd 5; the probes' have not)
    const once = join(s.root, 'removed-once');
    const wrap = (name: string, real: string) => {
      const file = join(s.root, name);
      writeFileSync(file, `#!/bin/sh\n[ -e /proc/$$/fd/5 ] && echo x >> ${once}.n\n[ ! -e /proc/$$/fd/5 ] || [ -e ${once} ] || { : > ${once}; rm -rf ${sockDir}; }\nexec ${real} "$@"\n`);
      chmodSync(file, 0o755);
      return file;
    };
    const bwrap = wrap('bwrap-removes', findExecutable('bwrap')!);
    const cases = [
      // the root map's step hides the socket (premount.ts) before bwrap starts: removed after, nothing fails
      // (the wrapper removes the host directory from the step's namespace, where the host is left
      // writable for it: with the step's read-only host it could not, and the hide is the same either way)
      { name: 'root map, the directory removed before bwrap', options: { bwrap, stepReadOnly: 'off' as const }, starts: 'x\n' },
      { name: 'no root map: bwrap hides it', options: { bwrap, rootUidMap: 'off' as const }, starts: 'x\nx\n' },
    ];
    for (const c of cases) {
      rmSync(once, { force: true });
      mkdirSync(sockDir, { recursive: true });
      const sb = s.sandbox(c.options);
      try {
        const r = await sb.run(req(s, ['sh', '-c', 'echo ran']));
        expect(existsSync(once), c.name).toBe(true);
        // starts of the run's wrapped program: one, or the one whose mount failed and the one tried again
        expect(readFileSync(`${once}.n`, 'utf8'), c.name).toBe(c.starts);
        rmSync(`${once}.n`);
        expect(r.stdout, `${c.name}: ${r.stderr}`).toBe('ran\n');
      } finally {
        await sb.close();
      }
    }
  });
});
