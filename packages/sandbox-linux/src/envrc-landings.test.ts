import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * What a folder's `.envrc` loads runs at the person's next `cd` there (direnv allows the `.envrc`
 * alone): the `.env` its `dotenv` exports (PROMPT_COMMAND, PATH), a `source_env` file, a
 * `PATH_add` folder, a local flake. Each is a landing by reference at the commit; before, each of
 * these writes landed. Real sandboxed commands, the overlay model.
 */
let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => execFileSync('rm', ['-rf', s.root]));

const run = (dir: string, script: string) => createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') }).run(req(s, ['sh', '-c', script], { policy: workspacePolicy(s), cwd: dir }));
const folder = (name: string, envrc?: string) => {
  const d = join(s.ws, name);
  mkdirSync(d);
  if (envrc !== undefined) writeFileSync(join(d, '.envrc'), envrc);
  return d;
};

describe('what an .envrc loads is a landing', { timeout: 120_000 }, () => {
  it('dotenv, PATH_add, source_env_if_exists and use flake: each file they name is refused, the rest lands', async () => {
    // (a `.env*` name is never written by a sandboxed command anyway: the control plane's pattern)
    const d = folder('direnv', 'dotenv config/dev.vars\nPATH_add bin\nsource_env_if_exists .envrc.local\nuse flake\n');
    const r = await run(d, "mkdir -p config bin && echo 'PROMPT_COMMAND=\"touch /tmp/pwned\"' > config/dev.vars; printf '#!/bin/sh\\nexit 0\\n' > bin/git; echo 'touch x' > .envrc.local; echo '{ }' > flake.nix; echo kept > notes.txt");
    expect(r.writeDenied, r.stderr).toBe(true);
    for (const rel of ['config/dev.vars', 'bin/git', '.envrc.local', 'flake.nix']) expect(existsSync(join(d, rel)), rel).toBe(false);
    expect(readFileSync(join(d, 'notes.txt'), 'utf8')).toBe('kept\n');
  });

  it('an .envrc above the writable root counts too (direnv loads the nearest one above where the person is)', async () => {
    // the scene's workspace is a writable root; its parent holds an .envrc naming a folder inside it
    writeFileSync(join(s.root, '.envrc'), 'PATH_add ws/tools\n');
    try {
      const r = await run(s.ws, 'mkdir -p tools && echo x > tools/ls; echo y > above-notes.txt');
      expect(r.writeDenied, r.stderr).toBe(true);
      expect(existsSync(join(s.ws, 'tools', 'ls'))).toBe(false);
      expect(readFileSync(join(s.ws, 'above-notes.txt'), 'utf8')).toBe('y\n');
    } finally {
      execFileSync('rm', ['-f', join(s.root, '.envrc')]);
    }
  });

  it('an .envrc that names what cannot be told (a variable) protects its folder whole; other folders write as before', async () => {
    const d = folder('unclear', 'dotenv "$ENV_FILE"\n');
    const other = folder('plain');
    const r = await run(s.ws, 'echo x > unclear/anything.txt; mkdir -p plain/bin && echo y > plain/bin/git; echo z > plain/notes.txt');
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(join(d, 'anything.txt'))).toBe(false);
    expect(r.stderr).toContain(`${d}: nothing the command wrote in it was committed (rule: landing): its .envrc loads what cannot be told here (dotenv $ENV_FILE)`);
    // without an .envrc there, the same names are the workspace's to write
    expect(readFileSync(join(other, 'bin', 'git'), 'utf8')).toBe('y\n');
    expect(readFileSync(join(other, 'notes.txt'), 'utf8')).toBe('z\n');
  });

  // found by review (stop 52's own note): the .envrc of a folder whose name is not UTF-8 was skipped,
  // so what it loads landed; it now protects its folder whole and names what it loads besides
  it('an .envrc under a name that is not UTF-8 protects its folder, and what it loads outside it', async () => {
    const raw = Buffer.concat([Buffer.from(`${s.ws}/`), Buffer.from([0xfe]), Buffer.from('/projR')]);
    mkdirSync(raw, { recursive: true });
    writeFileSync(Buffer.concat([raw, Buffer.from('/.envrc')]), 'PATH_add bin\nsource_env ../../common-envrc.sh\n');
    const r = await run(s.ws, 'd="$(printf "\\376")/projR"; mkdir -p "$d/bin" && echo x > "$d/bin/git"; echo "touch /tmp/pwned" > common-envrc.sh; echo fine > raw-notes.txt');
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(Buffer.concat([raw, Buffer.from('/bin')]))).toBe(false);
    expect(existsSync(join(s.ws, 'common-envrc.sh'))).toBe(false);
    expect(r.stderr).toContain('its .envrc lies under a name that is not UTF-8');
    expect(readFileSync(join(s.ws, 'raw-notes.txt'), 'utf8')).toBe('fine\n');
  });
});
