import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandEnvArgs, LAUNCH_ENV } from './launch-env.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

// A library that, loaded into any process, leaves a file named after that process in a host
// directory no sandbox may write, and says so on stderr. Every program of the launch chain (the
// root map's python3, unshare, sh, mount, bwrap) runs on the host, root's when the daemon is:
// none of them may load it. The command itself may (its environment is its own).
const PRELOAD_C = `
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
  char comm[64] = "unknown";
  int f = open("/proc/self/comm", O_RDONLY);
  if (f >= 0) { int n = read(f, comm, sizeof comm - 1); if (n > 0) comm[n - 1] = 0; close(f); }
  char p[4096];
  snprintf(p, sizeof p, "%s/%s.%d.uid%d", MARKS, comm, (int)getpid(), (int)getuid());
  int m = open(p, O_CREAT | O_WRONLY, 0644);
  if (m >= 0) close(m);
  char msg[128];
  int k = snprintf(msg, sizeof msg, "preload-loaded:%s\\n", comm);
  if (k > 0) write(2, msg, (size_t)k);
}
`;

let s: Scene;
let marks: string;
let lib: string;
beforeAll(() => {
  s = makeScene();
  // beside the workspace, never writable inside: a file here can only come from the host side
  const dir = join(s.root, 'preload');
  marks = join(dir, 'marks');
  mkdirSync(marks, { recursive: true });
  writeFileSync(join(dir, 'preload.c'), PRELOAD_C);
  lib = join(dir, 'preload.so');
  execFileSync('gcc', ['-shared', '-fPIC', `-DMARKS="${realpathSync(marks)}"`, '-o', lib, join(dir, 'preload.c')]);
});
afterAll(() => s.cleanup());

describe('the launch chain runs with a fixed environment', () => {
  it('is PATH only, with absolute directories, and no LD_* or shell start-up variable', () => {
    expect(Object.keys(LAUNCH_ENV)).toEqual(['PATH']);
    for (const d of LAUNCH_ENV.PATH.split(':')) expect(d.startsWith('/')).toBe(true);
  });

  it('hands the command its environment as bwrap arguments, names and values as separate operands', () => {
    expect(commandEnvArgs({ A: '1', '--bind': '/ /', B: '' })).toEqual(['--setenv', 'A', '1', '--setenv', '--bind', '/ /', '--setenv', 'B', '']);
  });

  it.each(['look', 'auto'] as const)(
    'hostModel %s: LD_PRELOAD of the request loads in the command only, never in a host step',
    { timeout: 120_000 },
    async (hostModel) => {
      for (const f of readdirSync(marks)) rmSync(join(marks, f));
      const sb = createLinuxSandbox({ hostModel });
      const base = req(s, ['/bin/echo', 'inside']);
      const env = { ...base.env, LD_PRELOAD: lib, LD_LIBRARY_PATH: join(s.root, 'preload'), BASH_ENV: join(s.root, 'nothing'), ENV: join(s.root, 'nothing') };
      const r = await sb.run({ ...base, env });
      expect(r.stdout).toBe('inside\n');
      // the command loaded it (inside, where the marks directory is read-only)...
      expect(r.stderr).toContain('preload-loaded:echo');
      // ...and nothing on the host did
      expect(r.stderr.match(/preload-loaded:\S+/g)).toEqual(['preload-loaded:echo']);
      expect(readdirSync(marks)).toEqual([]);
    },
  );
});
