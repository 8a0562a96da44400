import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanHost } from './scan.js';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * Found by an attack on c4735c8: a `.env` symlink directly in an ancestor that lies inside a
 * directory a `{ path }` rule hides (data/tmp, the parent of the session temp). The scan reports a
 * matching symlink at its target (via the link) and the translation hides the target: the link's
 * content is a `.env`'s. c4735c8 no longer listed data/tmp, so the target was left readable (and
 * writable, when it lies in a write root); such an ancestor is now listed for its symlinks.
 */
let s: Scene;
let outside: string;
let inWs: string;
beforeAll(() => {
  s = makeScene();
  mkdirSync(join(s.root, 'elsewhere'));
  outside = join(s.root, 'elsewhere', 'creds.txt');
  writeFileSync(outside, 'OUTSIDE-SECRET\n');
  inWs = join(s.ws, 'src', 'creds.txt');
  writeFileSync(inWs, 'WS-SECRET\n');
  symlinkSync(outside, join(s.data, 'tmp', '.env'));
  symlinkSync(inWs, join(s.data, 'tmp', '.env.local'));
});
afterAll(() => s.cleanup());

describe('a .env symlink in a sealed ancestor', () => {
  it('has its targets found by the scan', () => {
    const facts = scanHost(workspacePolicy(s), s.ws, { home: s.home, noCache: true });
    const found = facts.found.map((f) => `${f.path} via ${f.via ?? ''}`);
    expect(found).toContain(`${outside} via ${join(s.data, 'tmp', '.env')}`);
    expect(found).toContain(`${inWs} via ${join(s.data, 'tmp', '.env.local')}`);
  });

  it('has its targets hidden in a real sandbox', async () => {
    const sb = createLinuxSandbox({ hostModel: 'overlay' });
    try {
      const r = await sb.run(req(s, ['sh', '-c', `cat ${outside}; cat ${inWs}; echo done`]));
      expect(r.stdout).not.toMatch(/OUTSIDE-SECRET/);
      expect(r.stdout).not.toMatch(/WS-SECRET/);
      expect(r.stdout).toMatch(/done/);
    } finally {
      await sb.close();
    }
  });

  it('keeps the target in the write root unwritable through its own path', async () => {
    const sb = createLinuxSandbox({ hostModel: 'overlay' });
    try {
      await sb.run(req(s, ['sh', '-c', `echo PWNED >> ${inWs}; echo done`]));
      expect(readFileSync(inWs, 'utf8')).not.toMatch(/PWNED/);
    } finally {
      await sb.close();
    }
  });
});
