import { closeSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeProcessDir } from '@aalis/core';
import { CLONE_NEWUSER, CREATING_OPEN_FLAGS, DENIED_IOCTLS, DENIED_SOCKETS, DENIED_SYSCALLS, FALLBACK_SYSCALLS, MODE_SYSCALLS, SET_ID_BITS } from '@aalis/api-reach';

/*
 * The engine's seccomp profile, translated from api-reach's syscall policy: the same refusals the
 * Linux backend's BPF program makes, so a command is refused the same calls whichever backend
 * runs it. The engine's own default profile allows every one of the mode calls below with any
 * mode; a container running as the owner (uid 0 when the daemon is root) could otherwise leave a
 * set-user-id root shell in the workspace. The default action allows: the container has no
 * capabilities and no_new_privs, which is what the engine's default list mostly guards.
 */

const EPERM = 1;
const ENOSYS = 38;

type Arg = { readonly index: number; readonly value: number; readonly valueTwo?: number; readonly op: 'SCMP_CMP_EQ' | 'SCMP_CMP_MASKED_EQ' };
type Rule = { readonly names: readonly string[]; readonly action: 'SCMP_ACT_ERRNO'; readonly errnoRet: number; readonly args?: readonly Arg[] };

/** The profile's shape (the engine's `seccomp=` file format). */
export interface DockerSeccompProfile {
  readonly defaultAction: 'SCMP_ACT_ALLOW';
  readonly architectures: readonly string[];
  readonly syscalls: readonly Rule[];
}

const bitSet = (index: number, bit: number): Arg => ({ index, value: bit, valueTwo: bit, op: 'SCMP_CMP_MASKED_EQ' });
/** ioctl's request is an unsigned int: only its low word counts. */
const lowWord = (index: number, value: number): Arg => ({ index, value: 0xffffffff, valueTwo: value, op: 'SCMP_CMP_MASKED_EQ' });

/**
 * The profile for an engine on `arch` (node's `process.arch`): only that native architecture is
 * listed, so a call through a 32-bit or x32 entry is killed, as in the Linux backend.
 */
export function dockerSeccompProfile(arch: string = process.arch): DockerSeccompProfile {
  const architectures = arch === 'arm64' ? ['SCMP_ARCH_AARCH64'] : ['SCMP_ARCH_X86_64'];
  const syscalls: Rule[] = [
    { names: DENIED_SYSCALLS, action: 'SCMP_ACT_ERRNO', errnoRet: EPERM },
    { names: FALLBACK_SYSCALLS, action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS },
    { names: ['clone', 'unshare'], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM, args: [bitSet(0, CLONE_NEWUSER)] },
    ...Object.values(DENIED_IOCTLS).map((request): Rule => ({ names: ['ioctl'], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM, args: [lowWord(1, request)] })),
    {
      names: ['socket'],
      action: 'SCMP_ACT_ERRNO',
      errnoRet: EPERM,
      args: [lowWord(0, DENIED_SOCKETS.AF_NETLINK), lowWord(2, DENIED_SOCKETS.NETLINK_NETFILTER)],
    },
  ];
  // One rule per bit (and per creating flag): a rule's conditions all hold together, rules are alternatives.
  for (const [name, modeArg, flagsArg] of MODE_SYSCALLS) {
    for (const bit of SET_ID_BITS) {
      if (flagsArg === undefined) syscalls.push({ names: [name], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM, args: [bitSet(modeArg, bit)] });
      else for (const flag of CREATING_OPEN_FLAGS) syscalls.push({ names: [name], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM, args: [bitSet(flagsArg, flag), bitSet(modeArg, bit)] });
    }
  }
  return { defaultAction: 'SCMP_ACT_ALLOW', architectures, syscalls };
}

let written: string | undefined;

/**
 * The profile as a file the docker client reads (`--security-opt seccomp=<file>`), written once
 * per process into a fresh directory only this user can enter, never overwritten: a command that
 * could change it would choose its own filter. The directory goes when the process exits; those
 * of this user's processes that were killed first are removed by the next process that writes one
 * (core's `makeProcessDir`: every `aalis exec --backend docker` left one behind before).
 */
export function dockerSeccompProfileFile(parent = tmpdir()): string {
  if (written !== undefined) return written;
  const dir = makeProcessDir(parent, 'aalis-seccomp-');
  const file = join(dir, 'profile.json');
  const fd = openSync(file, 'wx', 0o400);
  try {
    writeSync(fd, JSON.stringify(dockerSeccompProfile()));
  } finally {
    closeSync(fd);
  }
  written = file;
  return file;
}
