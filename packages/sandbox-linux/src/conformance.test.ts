import { lstatSync, readFileSync } from 'node:fs';
import { sandboxPolicyAllows } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTree, makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

// Every non-empty file of the scene, probed from inside the sandbox without changing it: read it
// whole, and open it for appending without writing. What the kernel allowed must be what
// api-reach's reference evaluation of the same policy says.
const PROBE = `
import json, os, sys
out = {}
for p in json.load(sys.stdin):
    try:
        with open(p, 'rb') as f: data = f.read()
        r = data.decode('latin-1')
    except OSError as e: r = None
    try:
        os.close(os.open(p, os.O_WRONLY | os.O_APPEND)); w = True
    except OSError as e: w = False
    out[p] = [r, w]
print(json.dumps(out))
`;

let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => s.cleanup());

describe('the sandbox agrees with the reference evaluation of the policy', { timeout: 120_000 }, () => {
  it('for every file of the scene, reads and writes', async () => {
    const policy = workspacePolicy(s);
    const files = listTree(s.root).filter((p) => lstatSync(p).isFile() && lstatSync(p).size > 0);
    expect(files.length).toBeGreaterThan(20);
    const r = await createLinuxSandbox().run(req(s, ['python3', '-c', PROBE], { stdin: JSON.stringify(files), policy }));
    expect(r.stderr).toBe('');
    const seen = JSON.parse(r.stdout) as Record<string, [string | null, boolean]>;
    const mismatches: string[] = [];
    for (const p of files) {
      const [content, writable] = seen[p]!;
      const readable = content === readFileSync(p, 'latin1'); // a hidden file reads as empty
      const canRead = sandboxPolicyAllows(policy, 'read', p, 'linux');
      // documented deviation: what cannot be read cannot be written in the sandbox either
      const canWrite = sandboxPolicyAllows(policy, 'write', p, 'linux') && canRead;
      if (readable !== canRead) mismatches.push(`read ${p}: sandbox ${readable}, policy ${canRead}`);
      if (writable !== canWrite) mismatches.push(`write ${p}: sandbox ${writable}, policy ${canWrite}`);
    }
    expect(mismatches).toEqual([]);
    // the scene has both outcomes of each, or the comparison would prove little
    const verdicts = files.map((p) => [sandboxPolicyAllows(policy, 'read', p, 'linux'), sandboxPolicyAllows(policy, 'write', p, 'linux')]);
    expect(new Set(verdicts.map((v) => v.join()))).toEqual(new Set(['true,true', 'true,false', 'false,false']));
  });
});
