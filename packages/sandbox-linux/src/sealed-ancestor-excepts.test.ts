import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapePattern, type SandboxPolicy } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanHost } from './scan.js';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * Found by an attack on c4735c8: the rule that hides data/tmp has only a path exception
 * (data/tmp/e), so data/tmp counts as sealed; another read-deny rule, a pattern, hides data/tmp/e
 * but puts back data/tmp/e/pub by a pattern exception. data/tmp/e (the session temp's parent) was
 * hidden and inside data/tmp, so c4735c8 did not list it: pub, which the policy leaves readable,
 * was not found and stayed under a tmpfs (closed, not a leak). An ancestor inside one of the
 * sealing rule's own exceptions is now listed whole.
 */
let s: Scene;
let e: string;
let sessionTmp: string;
beforeAll(() => {
  s = makeScene();
  e = join(s.data, 'tmp', 'e');
  sessionTmp = join(e, 'session-1');
  mkdirSync(sessionTmp, { recursive: true });
  writeFileSync(join(e, 'pub'), 'PUBLIC\n');
  writeFileSync(join(e, 'priv'), 'PRIVATE\n');
});
afterAll(() => s.cleanup());

function policy(): SandboxPolicy {
  const base = workspacePolicy(s);
  const tmp = join(s.data, 'tmp');
  return {
    ...base,
    readDeny: [
      base.readDeny[0]!,
      base.readDeny[1]!,
      { path: tmp, except: [{ path: e }] },
      { pattern: `^${escapePattern(e)}(?:/.*)?$`, except: [{ pattern: `^${escapePattern(e)}/pub$` }] },
    ],
    readAllowWithin: [sessionTmp],
    write: [s.ws, sessionTmp],
    unixSockets: [s.ws, sessionTmp],
    tmp: sessionTmp,
  };
}

describe('a pattern exception of another rule inside a sealed directory', () => {
  it('is found by the scan', () => {
    const facts = scanHost(policy(), s.ws, { home: s.home, noCache: true });
    expect(facts.found.map((f) => f.path)).toContain(join(e, 'pub'));
  });

  it('is readable in a real sandbox, its sibling not', async () => {
    const sb = createLinuxSandbox({ hostModel: 'overlay' });
    try {
      const r = await sb.run(req(s, ['sh', '-c', `cat ${e}/pub; cat ${e}/priv; echo done`], { policy: policy() }));
      expect(r.stdout).toBe('PUBLIC\ndone\n');
    } finally {
      await sb.close();
    }
  });
});
