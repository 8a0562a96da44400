import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { arch } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene } from './scene.testing.js';
import { buildSeccompFilter } from './seccomp.js';
import { createLinuxSandbox } from './service.js';

// The control: the same sandbox with a filter that allows everything, so each refusal below is
// shown to come from our filter and not from the namespaces around it.
const allowAll = Buffer.alloc(8);
allowAll.writeUInt16LE(0x06, 0);
allowAll.writeUInt32LE(0x7fff0000, 4);

const URING_SYSCTL = '/proc/sys/kernel/io_uring_disabled';
const filtered = createLinuxSandbox();
const control = createLinuxSandbox({ seccompFilter: allowAll });
let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => s.cleanup());

const SYSCALLS_PY = `
import ctypes, os, json, errno, time
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr, *[ctypes.c_long(a) for a in args])
    e = ctypes.get_errno()
    if r == 0 and nr == CLONE: os._exit(0)
    return errno.errorcode.get(e, 'OK') if r < 0 else 'OK'
X86 = os.uname().machine == 'x86_64'
PTRACE, PVR, URING, UNSHARE, CLONE, CLONE3 = (101, 310, 425, 272, 56, 435) if X86 else (117, 270, 425, 97, 220, 435)
params = ctypes.create_string_buffer(120)
child = os.fork()
if child == 0:
    time.sleep(5); os._exit(0)
out = {
  'ptrace': call(PTRACE, 16, child, 0, 0),  # PTRACE_ATTACH to our own child: the kernel allows it
  'process_vm_readv': call(PVR, os.getpid(), 0, 0, 0, 0, 0),
  'io_uring_setup': call(URING, 1, ctypes.addressof(params)),
  'unshare_newuser': call(UNSHARE, 0x10000000),
  'clone_newuser': call(CLONE, 0x10000000 | 17, 0, 0, 0, 0),
  'clone3': call(CLONE3, 0, 0),
}
os.kill(child, 9)
print(json.dumps(out))
`;

const TTY_PY = `
import os, fcntl, termios, json, errno, ctypes
try:
    os.setsid()
except OSError:
    pass
m, t = os.openpty()
fcntl.ioctl(t, termios.TIOCSCTTY, 0)  # our own controlling terminal: the kernel itself would allow TIOCSTI
def io(req, arg):
    try:
        fcntl.ioctl(t, req, arg); return 'OK'
    except OSError as e:
        return errno.errorcode[e.errno]
print(json.dumps({'TIOCSTI': io(termios.TIOCSTI, b'x'), 'TIOCLINUX': io(0x541C, b'\\x0c')}))
`;

async function py(sb: typeof filtered, code: string): Promise<Record<string, string>> {
  const r = await sb.run(req(s, ['python3', '-c', code]));
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout);
}

describe('the seccomp filter, run by real processes', { timeout: 120_000 }, () => {
  it('refuses ptrace, process_vm_readv, io_uring and new user namespaces with EPERM; clone3 with ENOSYS', async () => {
    const denied = await py(filtered, SYSCALLS_PY);
    expect(denied).toEqual({
      ptrace: 'EPERM',
      process_vm_readv: 'EPERM',
      io_uring_setup: 'EPERM',
      unshare_newuser: 'EPERM',
      clone_newuser: 'EPERM',
      clone3: 'ENOSYS',
    });
    const allowed = await py(control, SYSCALLS_PY);
    expect(allowed.ptrace).toBe('OK');
    expect(allowed.process_vm_readv).toBe('OK');
    expect(allowed.clone3).not.toBe('ENOSYS');
    if (existsSync(URING_SYSCTL) && readFileSync(URING_SYSCTL, 'utf8').trim() === '0') expect(allowed.io_uring_setup).toBe('OK');
  });

  it('refuses TIOCSTI and TIOCLINUX on a terminal the process controls', async () => {
    expect(await py(filtered, TTY_PY)).toEqual({ TIOCSTI: 'EPERM', TIOCLINUX: 'EPERM' });
    const allowed = await py(control, TTY_PY);
    expect(allowed.TIOCSTI).toBe('OK');
    expect(allowed.TIOCLINUX).not.toBe('EPERM');
  });

  it('refuses a NETLINK_NETFILTER socket (nftables) with EPERM; NETLINK_ROUTE and inet sockets open', async () => {
    const code = `
import socket, json, errno
def mk(family, kind, proto):
    try:
        socket.socket(family, kind, proto).close(); return 'OK'
    except OSError as e:
        return errno.errorcode[e.errno]
print(json.dumps({
  'netfilter': mk(socket.AF_NETLINK, socket.SOCK_RAW, 12),
  'netfilter_dgram': mk(socket.AF_NETLINK, socket.SOCK_DGRAM, 12),
  'route': mk(socket.AF_NETLINK, socket.SOCK_RAW, 0),
  'inet': mk(socket.AF_INET, socket.SOCK_STREAM, 0),
}))
`;
    expect(await py(filtered, code)).toEqual({ netfilter: 'EPERM', netfilter_dgram: 'EPERM', route: 'OK', inet: 'OK' });
    expect((await py(control, code)).netfilter).toBe('OK');
    const ip = await filtered.run(req(s, ['ip', '-o', 'link'])); // iproute2 speaks NETLINK_ROUTE
    expect(ip.exitCode).toBe(0);
    expect(ip.stdout).toContain(' lo:');
  });

  it('refuses a set-user-id or set-group-id mode in every call that sets one; other modes, and opens that create nothing, go through', async () => {
    const code = `
import os, json, errno, stat, ctypes
libc = ctypes.CDLL(None, use_errno=True)
def t(f):
    try:
        f(); return 'OK'
    except OSError as e:
        return errno.errorcode[e.errno]
def sys(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr, *args)
    return errno.errorcode.get(ctypes.get_errno(), 'OK') if r < 0 else 'OK'
X86 = os.uname().machine == 'x86_64'
for n in ('plain', 'new1', 'new2', 'node1'):
    try: os.unlink(n)
    except FileNotFoundError: pass
open('plain', 'w').close()
how = (ctypes.c_uint64 * 3)(0o100 | 0o1, 0o4755, 0)  # struct open_how: O_CREAT|O_WRONLY, mode
print(json.dumps({
  'chmod_suid': t(lambda: os.chmod('plain', 0o4755)),
  'chmod_sgid': t(lambda: os.chmod('plain', 0o2755)),
  'fchmod_suid': t(lambda: os.fchmod(os.open('plain', os.O_RDONLY), 0o4755)),
  'chmod_syscall_suid': sys(90, b'plain', 0o4755) if X86 else 'EPERM',
  'open_creat_suid': t(lambda: os.close(os.open('new1', os.O_CREAT | os.O_WRONLY, 0o4755))),
  'mknod_suid': t(lambda: os.mknod('node1', stat.S_IFREG | 0o4755)),
  'openat2_creat_suid': sys(437, -100, b'new1', ctypes.byref(how), 24),
  'chmod_plain': t(lambda: os.chmod('plain', 0o755)),
  'chmod_sticky': t(lambda: os.chmod('plain', 0o1755)),
  'open_creat_plain': t(lambda: os.close(os.open('new2', os.O_CREAT | os.O_WRONLY, 0o755))),
  'open_read_any_mode': t(lambda: os.close(os.open('plain', os.O_RDONLY, 0o6777))),
  'new1_exists': str(os.path.exists('new1')),
}))
`;
    expect(await py(filtered, code)).toEqual({
      chmod_suid: 'EPERM',
      chmod_sgid: 'EPERM',
      fchmod_suid: 'EPERM',
      chmod_syscall_suid: 'EPERM',
      open_creat_suid: 'EPERM',
      mknod_suid: 'EPERM',
      openat2_creat_suid: 'ENOSYS',
      chmod_plain: 'OK',
      chmod_sticky: 'OK',
      open_creat_plain: 'OK',
      open_read_any_mode: 'OK',
      new1_exists: 'False',
    });
    const allowed = await py(control, code);
    expect([allowed.chmod_suid, allowed.open_creat_suid, allowed.openat2_creat_suid]).toEqual(['OK', 'OK', 'OK']);
  });

  it('leaves no set-user-id copy of a shell on the host (cp /bin/sh x; chmod u+s x; install -m 4755)', async () => {
    for (const name of ['rootsh', 'rootsh2']) rmSync(join(s.ws, name), { force: true });
    const r = await filtered.run(req(s, ['sh', '-c', 'cp /bin/sh rootsh; chmod u+s rootsh; chmod g+s rootsh; install -m 4755 /bin/sh rootsh2; true']));
    expect(r.exitCode).toBe(0);
    expect(statSync(join(s.ws, 'rootsh')).mode & 0o6000).toBe(0);
    expect(existsSync(join(s.ws, 'rootsh2')) ? statSync(join(s.ws, 'rootsh2')).mode & 0o6000 : 0).toBe(0);
    await control.run(req(s, ['sh', '-c', 'chmod u+s rootsh']));
    expect(statSync(join(s.ws, 'rootsh')).mode & 0o4000).toBe(0o4000); // the control shows the check can fail
  });

  it('lets ordinary work through', async () => {
    const r = await filtered.run(req(s, ['sh', '-c', 'ls / >/dev/null && git --version && python3 -c "import threading; t=threading.Thread(target=print); t.start(); t.join()"']));
    expect(r.exitCode).toBe(0);
  });

  it.skipIf(arch() !== 'x64')('kills a process that enters through the 32-bit syscall ABI or x32 (arch check)', async () => {
    const int80 = `
import mmap, ctypes
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(bytes([0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0xc3]))  # mov eax, 20 (i386 getpid); int 0x80; ret
f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
print('pid', f())
`;
    const x32 = "import ctypes; print('x32', ctypes.CDLL(None).syscall(0x40000000 + 39))";
    const ok = await control.run(req(s, ['python3', '-c', int80]));
    if (ok.exitCode === 0) {
      // the kernel has 32-bit emulation, so only the filter can stop it
      const r = await filtered.run(req(s, ['python3', '-c', int80]));
      expect(r.stdout).not.toContain('pid');
      expect(r.exitCode).toBe(128 + 31); // SIGSYS, reported by bwrap as 128 + signal
    }
    const r = await filtered.run(req(s, ['python3', '-c', x32]));
    expect(r.stdout).not.toContain('x32');
    expect(r.exitCode).toBe(128 + 31);
  });

  it('is a well-formed program: every jump lands inside it', () => {
    const f = buildSeccompFilter();
    const n = f.length / 8;
    for (let i = 0; i < n; i++) {
      const code = f.readUInt16LE(i * 8);
      if ((code & 0x07) === 0x05) {
        expect(i + 1 + f.readUInt8(i * 8 + 2)).toBeLessThan(n);
        expect(i + 1 + f.readUInt8(i * 8 + 3)).toBeLessThan(n);
      }
    }
    expect(f.readUInt16LE((n - 1) * 8)).toBe(0x06); // ends in a return
  });
});
