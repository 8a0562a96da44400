import { describe, expect, it } from 'vitest';
import { readonlyPolicy, workspacePolicy } from '../test/policies.js';
import { policyAllowsRead, policyAllowsWrite } from './policy-verdict.js';

// The layer order of 004, one row a case: later layers win.
describe('policy verdicts follow the layers', () => {
  it.each([
    ['/Users/ana/src/app/index.ts', true, true],
    ['/Users/ana/src/app/.env', false, true],
    ['/Users/ana/src/app/.env.example', true, true],
    ['/Users/ana/src/app/.ENV', false, true],
    ['/Users/ana/src/app/.git/config', true, false],
    ['/Users/ana/src/app/.git/objects/ab', true, true],
    ['/Users/ana/src/app/.vscode/settings.json', true, false],
    ['/Users/ana/src/app/.vscode/tasks.json', true, false],
    ['/Users/ana/src/app/node_modules/.bin/x', true, true],
    ['/Users/ana/src/app/AGENTS.md', true, false],
    ['/Users/ana/.ssh/id_rsa', false, false],
    ['/Users/ana/.aalis/tmp/s-7f3a/x', true, true],
    ['/Users/ana/.aalis/tmp/s-other/x', false, false],
    ['/Users/ana/.aalis/secrets.yaml', false, false],
    ['/Users/ana/.aalis/workspace/notes.md', true, false],
    ['/Users/ana/Library/Caches/x', true, false], // the host's caches: never written (api-reach toolchain-caches.ts)
    ['/Users/ana/Library/Caches/aalis-sandbox/npm/x', true, true], // the sandbox's own
    ['/Users/ana/Library/Preferences/x.plist', true, false],
    ['/tmp/x', true, false],
    // The per-user temp is not in the policy; the profile adds it where caches are writable (seatbelt-profile tests).
    ['/var/folders/x1/abc123/T/y', true, false],
    ['/USERS/ANA/SRC/APP/x', true, true],
  ])('workspace: %s read %s write %s', (path, read, write) => {
    expect(policyAllowsRead(workspacePolicy, path)).toBe(read);
    expect(policyAllowsWrite(workspacePolicy, path)).toBe(write);
  });

  it.each([
    ['/Users/ana/src/app/index.ts', false],
    ['/Users/ana/.aalis/tmp/s-7f3a/x', true],
    ['/Users/ana/.aalis/tmp/s-7f3a/.git/hooks/x', false],
  ])('readonly: %s write %s', (path, write) => {
    expect(policyAllowsWrite(readonlyPolicy, path)).toBe(write);
  });
});
