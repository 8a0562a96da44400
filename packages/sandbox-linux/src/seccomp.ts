import { endianness } from 'node:os';
import { CLONE_NEWUSER, CREATING_OPEN_FLAGS, DENIED_IOCTLS, DENIED_SOCKETS, DENIED_SYSCALLS, MODE_SYSCALLS, SET_ID_BITS } from '@aalis/api-reach';
import { AalisError } from '@aalis/core';
import type { LinuxErrorCode } from './linux-error-codes.js';

/*
 * A classic-BPF seccomp filter, assembled here (no libseccomp, no native addon) and handed to
 * bubblewrap as raw `struct sock_filter` records through `--seccomp FD`, from api-reach's
 * syscall policy (the docker backend translates the same data into the engine's profile).
 * struct seccomp_data: nr @0 (u32), arch @4 (u32), ip @8, args[i] @16+8i (u64, low word first on
 * the little-endian architectures we support).
 */

/** Architectures the filter knows, with their audit arch constants (linux/audit.h). */
export const SECCOMP_ARCHES = {
  x86_64: 0xc000003e,
  aarch64: 0xc00000b7,
} as const;
/** One of {@link SECCOMP_ARCHES}. */
export type SeccompArch = keyof typeof SECCOMP_ARCHES;

/** The syscalls the filter looks at, per architecture. */
const SYSCALLS: Record<SeccompArch, Record<string, number>> = {
  x86_64: {
    ioctl: 16, ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, unshare: 272, clone: 56, clone3: 435,
    io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, setns: 308, bpf: 321, perf_event_open: 298,
    keyctl: 250, add_key: 248, request_key: 249, userfaultfd: 323, mount: 165, umount2: 166, pivot_root: 155,
    open_by_handle_at: 304, name_to_handle_at: 303, init_module: 175, finit_module: 313, delete_module: 176,
    kexec_load: 246, kexec_file_load: 320, reboot: 169, acct: 163, fsopen: 430, fsmount: 432, move_mount: 429,
    open_tree: 428, socket: 41,
    chmod: 90, fchmod: 91, fchmodat: 268, fchmodat2: 452, open: 2, creat: 85, openat: 257, openat2: 437, mknod: 133, mknodat: 259,
  },
  aarch64: {
    ioctl: 29, ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, unshare: 97, clone: 220, clone3: 435,
    io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, setns: 268, bpf: 280, perf_event_open: 241,
    keyctl: 219, add_key: 217, request_key: 218, userfaultfd: 282, mount: 40, umount2: 39, pivot_root: 41,
    open_by_handle_at: 265, name_to_handle_at: 264, init_module: 105, finit_module: 273, delete_module: 106,
    kexec_load: 104, kexec_file_load: 294, reboot: 142, acct: 89, fsopen: 430, fsmount: 432, move_mount: 429,
    open_tree: 428, socket: 198,
    fchmod: 52, fchmodat: 53, fchmodat2: 452, openat: 56, openat2: 437, mknodat: 33,
  },
};

const X32_SYSCALL_BIT = 0x40000000;

const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const ENOSYS = 38;

// BPF opcodes
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JSET_K = 0x45;
const RET_K = 0x06;

type Target = number | string; // absolute index or label
type Insn =
  | { op: 'ld'; offset: number }
  | { op: 'jeq' | 'jset'; k: number; jt: Target; jf: Target }
  | { op: 'ret'; k: number }
  | { op: 'label'; name: string };

/** A filter program too large for 8-bit jumps, or otherwise malformed: the policy is not applied. */
export class SeccompBuildError extends AalisError<LinuxErrorCode> {
  override readonly name = 'SeccompBuildError';
  constructor(message: string) {
    super('seccomp-build', message);
  }
}

function assemble(program: Insn[]): Buffer {
  const labels = new Map<string, number>();
  const real: Exclude<Insn, { op: 'label' }>[] = [];
  for (const i of program) {
    if (i.op === 'label') labels.set(i.name, real.length);
    else real.push(i);
  }
  const le = endianness() === 'LE';
  const buf = Buffer.alloc(real.length * 8);
  const resolve = (t: Target, at: number): number => {
    const abs = typeof t === 'number' ? t : labels.get(t);
    if (abs === undefined) throw new SeccompBuildError(`unknown label ${String(t)}`);
    const rel = abs - at - 1;
    if (rel < 0 || rel > 255) throw new SeccompBuildError(`jump of ${rel} out of range`);
    return rel;
  };
  real.forEach((i, at) => {
    let code: number;
    let jt = 0;
    let jf = 0;
    let k: number;
    if (i.op === 'ld') {
      code = LD_W_ABS;
      k = i.offset;
    } else if (i.op === 'ret') {
      code = RET_K;
      k = i.k;
    } else {
      code = i.op === 'jeq' ? JEQ_K : JSET_K;
      jt = resolve(i.jt, at);
      jf = resolve(i.jf, at);
      k = i.k;
    }
    const o = at * 8;
    if (le) buf.writeUInt16LE(code, o);
    else buf.writeUInt16BE(code, o);
    buf.writeUInt8(jt, o + 2);
    buf.writeUInt8(jf, o + 3);
    if (le) buf.writeUInt32LE(k >>> 0, o + 4);
    else buf.writeUInt32BE(k >>> 0, o + 4);
  });
  return buf;
}

const argLow = (i: number): number => 16 + 8 * i + (endianness() === 'LE' ? 0 : 4);

function archBlock(arch: SeccompArch): Insn[] {
  const nr = SYSCALLS[arch];
  const l = (s: string) => `${arch}:${s}`;
  const p: Insn[] = [{ op: 'label', name: l('start') }, { op: 'ld', offset: 0 }];
  if (arch === 'x86_64') p.push({ op: 'jset', k: X32_SYSCALL_BIT, jt: 'kill', jf: l('x') }, { op: 'label', name: l('x') });
  for (const name of DENIED_SYSCALLS) {
    const next = l(`after-${name}`);
    p.push({ op: 'jeq', k: nr[name]!, jt: 'eperm', jf: next }, { op: 'label', name: next });
  }
  p.push(
    { op: 'jeq', k: nr.clone3!, jt: 'enosys', jf: l('a') }, // flags sit behind a pointer: make libc fall back to clone
    { op: 'label', name: l('a') },
    { op: 'jeq', k: nr.ioctl!, jt: l('ioctl'), jf: l('b') },
    { op: 'label', name: l('b') },
    { op: 'jeq', k: nr.clone!, jt: 'flags0', jf: l('c') },
    { op: 'label', name: l('c') },
    { op: 'jeq', k: nr.unshare!, jt: 'flags0', jf: l('e') },
    { op: 'label', name: l('e') },
    { op: 'jeq', k: nr.openat2!, jt: 'enosys', jf: l('f') }, // the mode sits behind a pointer: make callers fall back to openat
    { op: 'label', name: l('f') },
  );
  const modes = MODE_SYSCALLS.filter(([name]) => nr[name] !== undefined);
  for (const [name] of modes) p.push({ op: 'jeq', k: nr[name]!, jt: l(`mode-${name}`), jf: l(`not-${name}`) }, { op: 'label', name: l(`not-${name}`) });
  p.push(
    { op: 'jeq', k: nr.socket!, jt: 'socket', jf: 'allow' },
    { op: 'label', name: l('ioctl') },
    { op: 'ld', offset: argLow(1) }, // the kernel takes the request as unsigned int: the low word decides
    { op: 'jeq', k: DENIED_IOCTLS.TIOCSTI, jt: 'eperm', jf: l('d') },
    { op: 'label', name: l('d') },
    { op: 'jeq', k: DENIED_IOCTLS.TIOCLINUX, jt: 'eperm', jf: 'allow' },
  );
  for (const [name, modeArg, flagsArg] of modes) {
    p.push({ op: 'label', name: l(`mode-${name}`) });
    if (flagsArg !== undefined) {
      p.push({ op: 'ld', offset: argLow(flagsArg) }, { op: 'jset', k: CREATING_OPEN_FLAGS[0] | CREATING_OPEN_FLAGS[1], jt: l(`creating-${name}`), jf: 'allow' }, { op: 'label', name: l(`creating-${name}`) });
    }
    p.push({ op: 'ld', offset: argLow(modeArg) }, { op: 'jset', k: SET_ID_BITS[0] | SET_ID_BITS[1], jt: 'eperm', jf: 'allow' });
  }
  return p;
}

/**
 * The filter: on an architecture other than x86_64 and aarch64 (or the x32 ABI, or a 32-bit
 * syscall entry on x86_64) the process is killed; ptrace, process_vm_*, io_uring and kernel/mount
 * surfaces fail with EPERM; ioctl TIOCSTI/TIOCLINUX fail with EPERM; clone/unshare with
 * CLONE_NEWUSER fail with EPERM; a NETLINK_NETFILTER socket fails with EPERM; a mode with the
 * set-user-id or set-group-id bit fails with EPERM ({@link MODE_SYSCALLS}); clone3 and openat2 fail
 * with ENOSYS; everything else is allowed.
 */
export function buildSeccompFilter(): Buffer {
  const program: Insn[] = [
    { op: 'ld', offset: 4 },
    { op: 'jeq', k: SECCOMP_ARCHES.x86_64, jt: 'x86_64:start', jf: 'not-x86' },
    { op: 'label', name: 'not-x86' },
    { op: 'jeq', k: SECCOMP_ARCHES.aarch64, jt: 'aarch64:start', jf: 'kill' },
    ...archBlock('x86_64'),
    ...archBlock('aarch64'),
    { op: 'label', name: 'socket' }, // domain and protocol are ints: the low words decide
    { op: 'ld', offset: argLow(0) },
    { op: 'jeq', k: DENIED_SOCKETS.AF_NETLINK, jt: 'netlink', jf: 'allow' },
    { op: 'label', name: 'netlink' },
    { op: 'ld', offset: argLow(2) },
    { op: 'jeq', k: DENIED_SOCKETS.NETLINK_NETFILTER, jt: 'eperm', jf: 'allow' },
    { op: 'label', name: 'flags0' },
    { op: 'ld', offset: argLow(0) },
    { op: 'jset', k: CLONE_NEWUSER, jt: 'eperm', jf: 'allow' },
    { op: 'label', name: 'allow' },
    { op: 'ret', k: RET_ALLOW },
    { op: 'label', name: 'eperm' },
    { op: 'ret', k: RET_ERRNO | EPERM },
    { op: 'label', name: 'enosys' },
    { op: 'ret', k: RET_ERRNO | ENOSYS },
    { op: 'label', name: 'kill' },
    { op: 'ret', k: RET_KILL_PROCESS },
  ];
  return assemble(program);
}
