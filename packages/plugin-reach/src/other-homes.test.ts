import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { otherHomesOf } from './other-homes.js';

describe('otherHomesOf', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-homes-')));
  const ada = join(root, 'ada');
  const bob = join(root, 'bob');
  const svc = join(root, 'svc');
  for (const dir of [ada, bob, svc]) mkdirSync(dir);
  symlinkSync(bob, join(root, 'bob-link'));
  const passwd = [
    `root:x:0:0:root:${root}/missing-root:/bin/sh`,
    `ada:x:1000:1000::${ada}:/bin/sh`,
    `bob:x:1001:1001::${root}/bob-link:/bin/sh`,
    `svc:x:110:110::${svc}:/usr/sbin/nologin`,
    'nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin',
    'odd:x:1002:1002::relative/home:/bin/sh',
    'slash:x:1003:1003::/:/bin/sh',
    '',
  ].join('\n');

  it("takes people's and root's homes from the user database, as real paths of directories that exist, not the user's own", () => {
    const homes = otherHomesOf(ada, 'linux', passwd).filter((h) => h.startsWith(root));
    expect(homes).toEqual([bob]);
  });

  it('leaves out system accounts, nobody, relative homes and /', () => {
    const homes = otherHomesOf('/nowhere', 'linux', passwd);
    expect(homes).not.toContain(svc);
    expect(homes).not.toContain('/');
    expect(homes.filter((h) => h.startsWith(root))).toEqual([ada, bob]);
  });
});
