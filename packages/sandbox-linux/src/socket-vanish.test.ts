// A hidden host socket whose directory vanishes between the scan and bwrap's set-up: bwrap cannot
// make the mount point of the empty file hiding it ("Can't mkdir parents for …/count.sock"; a
// daemon call once failed with it in a full bench). Nothing ran, and a fresh scan no longer lists
// it (its directory is gone), so the run is tried again (transientSetupFailure) and succeeds, with
// the launcher and the root map and without. With the retry taken out this fails with that message.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
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
    sockDir = join('/var/tmp', `aalis-vanishing-socket-${process.pid}`);
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
    // a bwrap that removes the socket's directory once, before it sets up: after the scan that found it
    // (a run's bwrap, which has the setup sync fd 5; the probe's have not)
    const once = join(s.root, 'removed-once');
    const wrapper = join(s.root, 'bwrap-removes');
    writeFileSync(wrapper, `#!/bin/sh\n[ -e /proc/$$/fd/5 ] && echo x >> ${once}.n\n[ ! -e /proc/$$/fd/5 ] || [ -e ${once} ] || { : > ${once}; rm -rf ${sockDir}; }\nexec ${findExecutable('bwrap')} "$@"\n`);
    chmodSync(wrapper, 0o755);
    for (const extra of [{}, { rootUidMap: 'off' as const }]) {
      rmSync(once, { force: true });
      mkdirSync(sockDir, { recursive: true });
      const sb = s.sandbox({ bwrap: wrapper, ...extra });
      try {
        const r = await sb.run(req(s, ['sh', '-c', 'echo ran']));
        expect(existsSync(once)).toBe(true);
        // two starts of a run's bwrap: the one whose set-up failed, and the one tried again
        expect(readFileSync(`${once}.n`, 'utf8')).toBe('x\nx\n');
        rmSync(`${once}.n`);
        expect(r.stdout, r.stderr).toBe('ran\n');
      } finally {
        await sb.close();
      }
    }
  });
});
