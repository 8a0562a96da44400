import type { SandboxPolicy } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { DATA, HOME, PROJECT, readonlyPolicy, SESSION_TMP, USER_DIRS, workspacePolicy } from '../test/policies.js';
import { decide, type SbplRequest } from '../test/sbpl-decide.js';
import { heads, readSbpl } from '../test/sbpl-reader.js';
import { seatbeltProfile } from './seatbelt-profile.js';

// Issue 20, item by item: what a Mac would decide under the profile as written, read back with
// the strict reader and decided by an evaluator written apart from the generator (last match
// wins). These only READ the profile; none was executed on a Mac in this session. The same items
// run for real in test/mac/issue20.mac.test.ts (`pnpm --filter @aalis/sandbox-darwin test:mac`).

const T = USER_DIRS.temp;
const C = USER_DIRS.cache;
const workspace = seatbeltProfile(workspacePolicy, { userDirs: USER_DIRS });
const readonly = seatbeltProfile(readonlyPolicy, { userDirs: USER_DIRS });
const profiles = { workspace, readonly } as const;

type Row = [what: string, profile: keyof typeof profiles, request: SbplRequest, expected: 'allow' | 'deny'];
const table = (rows: Row[]) => it.each(rows)('%s (%s) [read only; not run on a Mac]', (_what, which, request, expected) => {
  expect(decide(profiles[which], request).action).toBe(expected);
});

describe('holes: a read-denied file cannot be carried out by rename, link or clone', () => {
  table([
    ['mv .env notes.txt: unlinking .env', 'workspace', { op: 'file-write-unlink', path: `${PROJECT}/.env` }, 'deny'],
    ['ln .env notes.txt: linking .env', 'workspace', { op: 'file-link', path: `${PROJECT}/.env` }, 'deny'],
    ['cp -c .env notes.txt: cloning .env', 'workspace', { op: 'file-clone', path: `${PROJECT}/.env` }, 'deny'],
    ['.ENV in another case', 'workspace', { op: 'file-write-unlink', path: `${PROJECT}/.ENV.local` }, 'deny'],
    ['.env inside node_modules, where the exception re-allows writes', 'workspace', { op: 'file-write-unlink', path: `${PROJECT}/node_modules/pkg/.env` }, 'deny'],
    ['an ordinary file still renames', 'workspace', { op: 'file-write-unlink', path: `${PROJECT}/notes.txt` }, 'allow'],
    ['.env.example (carved out of the deny) renames', 'workspace', { op: 'file-write-unlink', path: `${PROJECT}/.env.example` }, 'allow'],
    ['.env in the session temp (readable again) renames', 'readonly', { op: 'file-write-unlink', path: `${SESSION_TMP}/.env` }, 'allow'],
    ['the home holding ~/.ssh cannot be renamed away', 'workspace', { op: 'file-write-unlink', path: HOME }, 'deny'],
  ]);

  it('a deny-read path inside a writable root: its folders up to / cannot be renamed, their siblings can [read only; not run on a Mac]', () => {
    const policy: SandboxPolicy = { ...workspacePolicy, readDeny: [...workspacePolicy.readDeny, { path: `${PROJECT}/config/secrets` }] };
    const profile = seatbeltProfile(policy);
    expect(decide(profile, { op: 'file-write-unlink', path: `${PROJECT}/config/secrets/key` }).action).toBe('deny');
    for (const folder of [`${PROJECT}/config`, PROJECT, `${HOME}/src`, `${PROJECT.toUpperCase()}/CONFIG`]) {
      expect(decide(profile, { op: 'file-write-unlink', path: folder }).action, folder).toBe('deny');
    }
    expect(decide(profile, { op: 'file-write-unlink', path: `${PROJECT}/src` }).action).toBe('allow');
    expect(decide(profile, { op: 'file-write-data', path: `${PROJECT}/config/other` }).action).toBe('allow');
  });

  it('the carry-out denies come after every write layer, so no exception re-allows them [read only; not run on a Mac]', () => {
    const lines = workspace.split('\n');
    const carry = lines.indexOf(';; layer readDeny.carry');
    expect(carry).toBeGreaterThan(lines.indexOf(';; layer write.controlDeny'));
    const after = lines.slice(carry + 1).filter((line) => line.startsWith('(allow file-write') || line.includes(' file-write-unlink') || line.includes(' file-link'));
    expect(after.every((line) => line.startsWith('(deny file-write-unlink file-link file-clone '))).toBe(true);
    expect(after.length).toBeGreaterThan(workspacePolicy.readDeny.length - 1);
  });
});

describe('holes: no set-user-id or set-group-id bit, anywhere', () => {
  // the same refusal api-reach's syscall policy makes on Linux and in docker
  table([
    ['chmod u+s on a file in the project', 'workspace', { op: 'file-write-setugid', path: `${PROJECT}/rootsh` }, 'deny'],
    ['chmod g+s on a folder in the session temp', 'readonly', { op: 'file-write-setugid', path: `${SESSION_TMP}/d` }, 'deny'],
    ['chmod 755 on the same file', 'workspace', { op: 'file-write-mode', path: `${PROJECT}/rootsh` }, 'allow'],
  ]);
});

describe('holes: localPorts on every spelling of the host', () => {
  const port = 4680;
  table([
    ['127.0.0.1', 'workspace', { op: 'network-outbound', remoteIp: { host: '127.0.0.1', port } }, 'deny'],
    ['::1', 'workspace', { op: 'network-outbound', remoteIp: { host: '::1', port } }, 'deny'],
    ['::ffff:127.0.0.1 (IPv4-mapped)', 'workspace', { op: 'network-outbound', remoteIp: { host: '::ffff:127.0.0.1', port } }, 'deny'],
    ['0.0.0.0', 'workspace', { op: 'network-outbound', remoteIp: { host: '0.0.0.0', port } }, 'deny'],
    ["the Mac's own LAN address", 'workspace', { op: 'network-outbound', remoteIp: { host: '192.168.1.20', port } }, 'deny'],
    ['binding the daemon port (to stand in for a restarting daemon)', 'workspace', { op: 'network-bind', localIp: { host: '127.0.0.1', port } }, 'deny'],
    ['another port on loopback', 'workspace', { op: 'network-outbound', remoteIp: { host: '127.0.0.1', port: 5432 } }, 'allow'],
    ['a remote https server', 'workspace', { op: 'network-outbound', remoteIp: { host: '93.184.216.34', port: 443 } }, 'allow'],
  ]);
});

describe('holes: sysctls are named, never kern.procargs*', () => {
  table([
    ["kern.procargs2 (another process's argv and environment)", 'workspace', { op: 'sysctl-read', sysctl: 'kern.procargs2' }, 'deny'],
    ['kern.procargs', 'readonly', { op: 'sysctl-read', sysctl: 'kern.procargs' }, 'deny'],
    ['an unlisted sysctl', 'workspace', { op: 'sysctl-read', sysctl: 'kern.bootargs' }, 'deny'],
    ['hw.ncpu', 'workspace', { op: 'sysctl-read', sysctl: 'hw.ncpu' }, 'allow'],
    ['hw.optional.arm.FEAT_SHA256 (by prefix)', 'workspace', { op: 'sysctl-read', sysctl: 'hw.optional.arm.FEAT_SHA256' }, 'allow'],
    ['kern.osproductversion', 'readonly', { op: 'sysctl-read', sysctl: 'kern.osproductversion' }, 'allow'],
    ['kern.proc.pid.N (ps; no arguments in it)', 'workspace', { op: 'sysctl-read', sysctl: 'kern.proc.pid.123' }, 'allow'],
  ]);

  it('no rule allows sysctl-read without a filter [read only; not run on a Mac]', () => {
    for (const form of readSbpl(workspace)) {
      if (heads(form).join(' ') === 'allow sysctl-read') expect(form.type === 'list' && form.items.length).toBeGreaterThan(2);
    }
  });
});

describe('holes: POSIX shared memory only by name', () => {
  table([
    ["another app's segment", 'workspace', { op: 'ipc-posix-shm-read-data', ipcName: 'com.example.app.shared' }, 'deny'],
    ["another app's segment, written", 'workspace', { op: 'ipc-posix-shm-write-data', ipcName: 'com.example.app.shared' }, 'deny'],
    ['the notification center (read)', 'workspace', { op: 'ipc-posix-shm-read-data', ipcName: 'apple.shm.notification_center' }, 'allow'],
    ['the notification center (written)', 'workspace', { op: 'ipc-posix-shm-write-data', ipcName: 'apple.shm.notification_center' }, 'deny'],
    ["cfprefs' segment (read)", 'workspace', { op: 'ipc-posix-shm-read-data', ipcName: 'apple.cfprefs.501' }, 'allow'],
    ["Python's shared_memory (/psm_…)", 'readonly', { op: 'ipc-posix-shm-write-create', ipcName: '/psm_2f9c1a' }, 'allow'],
    ["OpenMP's registration (/__KMP_REGISTERED_LIB_N)", 'workspace', { op: 'ipc-posix-shm-write-create', ipcName: '/__KMP_REGISTERED_LIB_4242' }, 'allow'],
  ]);
});

describe('false denials: the per-user temp and cache folders, /private/tmp', () => {
  table([
    ['xcrun_db in the per-user temp', 'workspace', { op: 'file-write-create', path: `${T}/xcrun_db` }, 'allow'],
    ["clang's module cache in the per-user cache", 'workspace', { op: 'file-write-data', path: `${C}/clang/ModuleCache/x.pcm` }, 'allow'],
    ['a landing inside the per-user temp stays denied', 'workspace', { op: 'file-write-data', path: `${T}/repo/.git/hooks/pre-commit` }, 'deny'],
    ['a file in the per-user temp is removed', 'workspace', { op: 'file-write-unlink', path: `${T}/build.tmp` }, 'allow'],
    ['the per-user temp itself is not removed or replaced', 'workspace', { op: 'file-write-unlink', path: T }, 'deny'],
    ['nor the per-user cache', 'workspace', { op: 'file-write-unlink', path: C }, 'deny'],
    ['nor a writable root (mv ~/Library/Caches ~/.npm/x)', 'workspace', { op: 'file-write-unlink', path: `${HOME}/Library/Caches` }, 'deny'],
    ['nor the project root, in any case', 'workspace', { op: 'file-write-unlink', path: PROJECT.toUpperCase() }, 'deny'],
    ['nor the session temp', 'readonly', { op: 'file-write-unlink', path: SESSION_TMP }, 'deny'],
    ['the per-user temp in the readonly tier (no caches there)', 'readonly', { op: 'file-write-create', path: `${T}/xcrun_db` }, 'deny'],
    ['the per-user cache in the readonly tier', 'readonly', { op: 'file-write-create', path: `${C}/clang/x` }, 'deny'],
    ["another user's folders", 'workspace', { op: 'file-write-create', path: '/private/var/folders/zz/other/T/x' }, 'deny'],
    ['/private/tmp (shared by every user and app; decided not writable)', 'workspace', { op: 'file-write-create', path: '/private/tmp/x' }, 'deny'],
    ['the session temp, where TMPDIR points', 'readonly', { op: 'file-write-create', path: `${SESSION_TMP}/x` }, 'allow'],
  ]);

  it('without the folders (off macOS, getconf silent) the profile grants nothing there [read only; not run on a Mac]', () => {
    expect(decide(seatbeltProfile(workspacePolicy), { op: 'file-write-create', path: `${T}/xcrun_db` }).action).toBe('deny');
  });

  it('refuses folders that are not per-user folders under /private/var/folders [read only; not run on a Mac]', () => {
    for (const bad of ['/', '/private/var/folders', '/private/var/folders/x1/abc123', '/Users/ana/T', '/private/var/folders/x1/abc123/T/../../..']) {
      expect(() => seatbeltProfile(workspacePolicy, { userDirs: { temp: bad, cache: C } }), bad).toThrow(/userDirs\.temp/);
    }
  });
});

describe('false denials: hard links and clones inside writable roots', () => {
  table([
    ['ln inside the project', 'workspace', { op: 'file-link', path: `${PROJECT}/src/a.ts` }, 'allow'],
    ['cp -c inside the project', 'workspace', { op: 'file-clone', path: `${PROJECT}/build/out.bin` }, 'allow'],
    ['a link in a toolchain cache', 'workspace', { op: 'file-link', path: `${HOME}/Library/Caches/aalis-sandbox/pnpm-store/v10/files/ab` }, 'allow'],
    ['a link onto a landing (.git/config)', 'workspace', { op: 'file-link', path: `${PROJECT}/.git/config` }, 'deny'],
    ['a clone onto AGENTS.md', 'workspace', { op: 'file-clone', path: `${PROJECT}/AGENTS.md` }, 'deny'],
    ['a link onto the control plane', 'workspace', { op: 'file-link', path: `${DATA}/config.yaml` }, 'deny'],
    ['a link outside every root', 'workspace', { op: 'file-link', path: `${HOME}/.zshrc` }, 'deny'],
    ['a link in the readonly tier outside the session temp', 'readonly', { op: 'file-link', path: `${PROJECT}/a` }, 'deny'],
  ]);
});

describe('false denials: listening when network is on', () => {
  table([
    ['bind 127.0.0.1:0', 'workspace', { op: 'network-bind', localIp: { host: '127.0.0.1', port: 0 } }, 'allow'],
    ['accept on it', 'workspace', { op: 'network-inbound', localIp: { host: '127.0.0.1', port: 53412 } }, 'allow'],
    ['bind with network off', 'readonly', { op: 'network-bind', localIp: { host: '127.0.0.1', port: 0 } }, 'deny'],
  ]);
});

describe('false denials: preferences, the JVM, pseudo-terminals', () => {
  const pty = ['com.apple.sandbox.pty'];
  table([
    ['cfprefsd (daemon)', 'readonly', { op: 'mach-lookup', globalName: 'com.apple.cfprefsd.daemon' }, 'allow'],
    ['cfprefsd (agent)', 'readonly', { op: 'mach-lookup', globalName: 'com.apple.cfprefsd.agent' }, 'allow'],
    ['reading a preference', 'readonly', { op: 'user-preference-read' }, 'allow'],
    ['writing a preference (cfprefsd asks the sandbox)', 'workspace', { op: 'user-preference-write' }, 'deny'],
    ['kern.grade_cputype (the JVM)', 'readonly', { op: 'sysctl-write', sysctl: 'kern.grade_cputype' }, 'allow'],
    ['any other sysctl write', 'workspace', { op: 'sysctl-write', sysctl: 'kern.maxfiles' }, 'deny'],
    ['openpty', 'readonly', { op: 'pseudo-tty' }, 'allow'],
    ['/dev/ptmx', 'readonly', { op: 'file-write-data', path: '/dev/ptmx' }, 'allow'],
    ['/dev/ptmx ioctl', 'readonly', { op: 'file-ioctl', path: '/dev/ptmx' }, 'allow'],
    ['a pty this sandbox opened (read)', 'readonly', { op: 'file-read-data', path: '/dev/ttys004', extensions: pty }, 'allow'],
    ['a pty this sandbox opened (write)', 'readonly', { op: 'file-write-data', path: '/dev/ttys004', extensions: pty }, 'allow'],
    ['a pty this sandbox opened (ioctl)', 'readonly', { op: 'file-ioctl', path: '/dev/ttys004', extensions: pty }, 'allow'],
    ["someone else's terminal (read)", 'workspace', { op: 'file-read-data', path: '/dev/ttys001' }, 'deny'],
    ["someone else's terminal (write)", 'workspace', { op: 'file-write-data', path: '/dev/ttys001' }, 'deny'],
    ["someone else's terminal (ioctl: TIOCSTI would type into it)", 'workspace', { op: 'file-ioctl', path: '/dev/ttys001' }, 'deny'],
  ]);
});

describe('each fix is a rule in its place (structure, read back with the strict reader)', () => {
  const forms = readSbpl(workspace);
  const at = (wanted: (text: string) => boolean, what: string): number => {
    const index = forms.findIndex((form) => wanted(JSON.stringify(form)));
    expect(index, what).toBeGreaterThanOrEqual(0);
    return index;
  };
  const lastAt = (wanted: (text: string) => boolean): number => forms.findLastIndex((form) => wanted(JSON.stringify(form)));
  const head = (form: number) => heads(forms[form]!).join(' ');

  it('the read-deny carry-out is the last file rule group but the roots, after controlDeny [read only; not run on a Mac]', () => {
    const lastWrite = lastAt((t) => t.includes('"file-write*"'));
    const firstCarry = at((t) => t.includes('"file-write-unlink"'), 'a carry rule');
    expect(firstCarry).toBeGreaterThan(lastWrite);
    expect(head(firstCarry)).toBe('deny file-write-unlink file-link file-clone');
    const roots = lastAt((t) => t.includes('"file-write-unlink"'));
    expect(head(roots)).toBe('deny file-write-unlink file-link file-clone');
  });

  it('the port denies follow the IP allow, on every host, for connect and bind [read only; not run on a Mac]', () => {
    const allow = at((t) => t === JSON.stringify(readSbpl('(allow network-outbound (remote ip))')[0]), 'the IP allow');
    for (const port of [4680, 4681]) {
      expect(at((t) => t.includes(`"*:${port}"`) && t.includes('"network-outbound"'), `connect ${port}`)).toBeGreaterThan(allow);
      expect(at((t) => t.includes(`"*:${port}"`) && t.includes('"network-bind"'), `bind ${port}`)).toBeGreaterThan(at((t) => t.includes('"*:*"'), 'the bind allow'));
    }
    expect(workspace).not.toContain('localhost:');
  });

  it('sysctl: a filtered allow, then the procargs deny [read only; not run on a Mac]', () => {
    const allow = forms.findIndex((form) => heads(form).join(' ') === 'allow sysctl-read');
    expect(allow).toBeGreaterThanOrEqual(0);
    const deny = at((t) => t.includes('"kern.procargs"'), 'the procargs deny');
    expect(head(deny)).toBe('deny sysctl-read');
    expect(deny).toBeGreaterThan(allow);
  });

  it('shared memory only with name filters [read only; not run on a Mac]', () => {
    for (const form of forms) {
      if (heads(form).some((h) => h.startsWith('ipc-posix-shm'))) expect(JSON.stringify(form)).toMatch(/ipc-posix-name/);
    }
  });

  it('terminals: the pty allow comes after the terminals deny and needs the extension [read only; not run on a Mac]', () => {
    const deny = at((t) => t.includes('"deny"') && t.includes('ttys'), 'the terminals deny');
    const allow = at((t) => t.includes('"allow"') && t.includes('"file-read*"') && t.includes('com.apple.sandbox.pty'), 'the pty read allow');
    expect(allow).toBeGreaterThan(deny);
  });
});
