import { SandboxUnavailableError } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { vanishedRootMapMount } from './vanished-mount.js';
import { commandNotRun, type Killer, killed, type LaunchState, launchFailure, released, sandboxKnown, VanishedMountError } from './launch-state.js';
import { OVERLAY_FAILURE } from './overlay-mount.js';
import { PidLimitError } from './pid-limit.js';
import { ROOT_MAP_FAILURE } from './root-map.js';
import type { Translation } from './translate.js';

/** A killer that records what it was asked to kill. */
function recorder(): Killer & { calls: string[] } {
  const calls: string[] = [];
  return { calls, killBwrap: () => calls.push('bwrap'), killPid: (pid) => calls.push(`pid ${pid}`) };
}

describe('the launch state machine', () => {
  it.each<[string, LaunchState, LaunchState, string[]]>([
    ['starting: the kill waits for the pid', { kind: 'starting', killAsked: false }, { kind: 'starting', killAsked: true }, []],
    ['held: bwrap and the waiting pid 1', { kind: 'held', pid: 7 }, { kind: 'killed', pid: 7 }, ['bwrap', 'pid 7']],
    ['released: bwrap and pid 1', { kind: 'released', pid: 7 }, { kind: 'killed', pid: 7 }, ['bwrap', 'pid 7']],
    ['no sandbox: bwrap only', { kind: 'no-sandbox', error: new Error('x') }, { kind: 'killed' }, ['bwrap']],
    ['killed: nothing more', { kind: 'killed', pid: 7 }, { kind: 'killed', pid: 7 }, []],
  ])('a kill when %s', (_, from, to, calls) => {
    const k = recorder();
    expect(killed(from, k)).toEqual(to);
    expect(k.calls).toEqual(calls);
  });

  it('a kill asked before the pid was known is done once it is, and the sandbox is never released', () => {
    const k = recorder();
    const s = sandboxKnown({ kind: 'starting', killAsked: true }, { ok: true, pid: 9 }, undefined, k);
    expect(s).toEqual({ kind: 'killed', pid: 9 });
    expect(k.calls).toEqual(['bwrap', 'pid 9']);
    let closed = false;
    expect(released(s, () => (closed = true))).toEqual(s);
    expect(closed).toBe(false);
  });

  it('a failed step before the pid (placeholders) kills the sandbox as soon as it is known', () => {
    const k = recorder();
    const s = sandboxKnown({ kind: 'starting', killAsked: false }, { ok: true, pid: 9 }, { step: 'placeholders', error: new Error('x') }, k);
    expect(s.kind).toBe('killed');
  });

  it('only a held sandbox is released', () => {
    let closed = 0;
    const close = () => closed++;
    expect(released({ kind: 'held', pid: 3 }, close)).toEqual({ kind: 'released', pid: 3 });
    expect(released({ kind: 'no-sandbox', error: new Error('x') }, close).kind).toBe('no-sandbox');
    expect(closed).toBe(1);
  });
});

describe('launchFailure: every failure before the command is an error, never a result', () => {
  const translation = { mounts: [{ path: '/gone/sock' }] } as unknown as Translation;
  const exists = (p: string) => p !== '/gone/sock';
  // a host where /var/lib/docker/overlay2/gone/merged was unmounted since bwrap read its mounts (the directory stays)
  const mounted = (p: string) => p !== '/var/lib/docker/overlay2/gone/merged';
  const end = (extra: Partial<Parameters<typeof launchFailure>[0]>) => launchFailure({ state: { kind: 'released', pid: 1 }, failure: undefined, stderr: '', exitCode: 0, overlays: false, rootMap: false, ...extra }, translation, exists, mounted);
  const remount = (path: string) => `bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount "/newroot${path}": No such file or directory`;
  it.each<[string, Partial<Parameters<typeof launchFailure>[0]>, RegExp | 'vanished' | undefined]>([
    ['the command ran', {}, undefined],
    ['the command ran and exited 1 with its own text', { exitCode: 1, stderr: 'oops' }, undefined],
    ['the overlay step failed', { state: { kind: 'no-sandbox', error: new Error('ended') }, overlays: true, stderr: `${OVERLAY_FAILURE}cannot mount an overlay on /w`, exitCode: 125 }, /could not be mounted as overlays/],
    ['the root map failed', { state: { kind: 'no-sandbox', error: new Error('ended') }, rootMap: true, stderr: `${ROOT_MAP_FAILURE}unshare failed`, exitCode: 125 }, /mapped off the host's uid 0/],
    ['the root map could not move a clone onto a mount unmounted since it read the table', { state: { kind: 'no-sandbox', error: new Error('ended') }, rootMap: true, stderr: `${ROOT_MAP_FAILURE}move_mount(/var/lib/docker/overlay2/gone/merged) failed: No such file or directory (errno 2)`, exitCode: 125 }, 'vanished'],
    ['the root map could not move a clone onto a mount still there', { state: { kind: 'no-sandbox', error: new Error('ended') }, rootMap: true, stderr: `${ROOT_MAP_FAILURE}move_mount(/var/lib/docker/overlay2/here/merged) failed: Operation not permitted (errno 1)`, exitCode: 125 }, /mapped off the host's uid 0/],
    ['the root map could not hide a file removed since the scan (premount.ts): retried', { state: { kind: 'no-sandbox', error: new Error('ended') }, rootMap: true, stderr: `${ROOT_MAP_FAILURE}cannot hide the file /gone/sock: mount failed: No such file or directory (errno 2)`, exitCode: 125 }, 'vanished'],
    ['the root map could not hide a directory still there', { state: { kind: 'no-sandbox', error: new Error('ended') }, rootMap: true, stderr: `${ROOT_MAP_FAILURE}cannot hide the directory /here: mount failed: Operation not permitted (errno 1)`, exitCode: 125 }, /a path the policy hides could not be hidden: .*\/here/],
    ['the root map met a mount table that kept changing', { state: { kind: 'no-sandbox', error: new Error('ended') }, rootMap: true, stderr: `${ROOT_MAP_FAILURE}the mount table kept changing while it was cloned: open_tree(/x) failed`, exitCode: 125 }, 'vanished'],
    ["an ordinary user's run from the launcher (`launcher: all`) whose child could not set it up", { state: { kind: 'no-sandbox', error: new Error('ended') }, viaLauncher: true, stderr: `${ROOT_MAP_FAILURE}the launcher's run child failed: OSError: x`, exitCode: 125 }, /the launcher could not start the run/],
    ["an ordinary user's run from the launcher whose command ran and printed that line itself", { viaLauncher: true, stderr: `${ROOT_MAP_FAILURE}x`, exitCode: 125 }, undefined],
    ['the placeholders failed', { state: { kind: 'killed', pid: 1 }, failure: { step: 'placeholders', error: new Error('EEXIST') } }, /placeholders could not be made/],
    ['the pid limit failed', { state: { kind: 'killed', pid: 1 }, failure: { step: 'pid-limit', error: new PidLimitError('no cgroup', 'give it a cgroup') } }, /pid limit could not be applied/],
    ['the network failed', { state: { kind: 'killed', pid: 1 }, failure: { step: 'network', error: new Error('slirp4netns died') } }, /network "on" could not be set up/],
    ['the network failed on a mount that vanished', { state: { kind: 'killed', pid: 1 }, failure: { step: 'network', error: new Error('x') }, stderr: 'bwrap: Can\'t bind /gone/sock' }, 'vanished'],
    ['bwrap refused its setup', { state: { kind: 'no-sandbox', error: new Error('ended') }, exitCode: 1, stderr: 'bwrap: Can\'t mount proc' }, /bubblewrap could not set up/],
    ['bwrap failed on a mount that vanished', { state: { kind: 'no-sandbox', error: new Error('ended') }, exitCode: 1, stderr: 'bwrap: Can\'t bind /gone/sock' }, 'vanished'],
    ['a host mount under / unmounted during the setup', { state: { kind: 'no-sandbox', error: new Error('ended') }, exitCode: 1, stderr: remount('/var/lib/docker/overlay2/gone/merged') }, 'vanished'],
    ['a host mount under / that is still mounted and refused its remount', { state: { kind: 'no-sandbox', error: new Error('ended') }, exitCode: 1, stderr: remount('/var/lib/docker/overlay2/here/merged') }, /bubblewrap could not set up/],
    ['the command ran (bwrap reported its exit) and printed a loopback failure of its own', { exitCode: 1, stderr: 'bwrap: loopback: Failed RTM_NEWADDR', commandRan: true }, undefined],
    ['the command ran (bwrap reported its exit) and printed a setup error of its own', { exitCode: 1, stderr: "bwrap: Can't mount proc", commandRan: true }, undefined],
    ['bwrap ended without exec (no exit reported): its loopback race, retried', { exitCode: 1, stderr: 'bwrap: loopback: Failed RTM_NEWADDR', commandRan: false }, 'vanished'],
    ['a prepared sandbox: its shim or command printed a transient-looking line, never retried', { exitCode: 1, stderr: 'bwrap: loopback: Failed RTM_NEWADDR', setupDone: true }, /bubblewrap could not set up/],
    ['killed by a timeout: the result says so', { state: { kind: 'killed', pid: 1 }, exitCode: 1, stderr: 'bwrap: whatever' }, undefined],
  ])('%s', (_, extra, expected) => {
    const e = end(extra);
    if (expected === undefined) expect(e).toBeUndefined();
    else if (expected === 'vanished') expect(e).toBeInstanceOf(VanishedMountError);
    else {
      expect(e).toBeInstanceOf(SandboxUnavailableError);
      expect(e!.message).toMatch(expected);
    }
  });

  it("the root map step could not make the host read-only (`+ro`): it says so and points to stepReadOnly, never to running as the host's root", () => {
    for (const why of ['mount_setattr(/, read-only, recursive) failed: Operation not permitted (errno 1)', 'mount_setattr(the overlay on /ws, writable) failed: Device or resource busy (errno 16)']) {
      const e = end({ state: { kind: 'no-sandbox', error: new Error('ended') }, rootMap: true, stderr: `${ROOT_MAP_FAILURE}cannot make the host read-only: ${why}`, exitCode: 125 });
      expect(e).toBeInstanceOf(SandboxUnavailableError);
      expect(e!.message).toMatch(/could not make the host's mounts read-only: .*read-only: mount_setattr/);
      expect(e!.message).not.toMatch(/mapped off the host's uid 0/);
      expect((e as SandboxUnavailableError).fix).toMatch(/stepReadOnly: off/);
      expect((e as SandboxUnavailableError).fix).not.toMatch(/rootUidMap/);
    }
  });
});

describe('vanishedRootMapMount', () => {
  it("reads a hidden entry's name that holds a newline whole", () => {
    const name = '/w/a\nb/.env';
    const stderr = `${ROOT_MAP_FAILURE}cannot hide the file ${name}: mount failed: No such file or directory (errno 2)\n`;
    expect(vanishedRootMapMount(stderr, (p) => p !== name)).toBe(true);
    expect(vanishedRootMapMount(stderr, () => true)).toBe(false);
  });
});

describe('commandNotRun: bubblewrap could not exec the command in a sandbox it had set up', () => {
  it.each([
    [1, 'bwrap: execvp nonexistentcmd: No such file or directory\n', { exitCode: 127, stderr: 'aalis: nonexistentcmd: command not found in the sandbox (or the interpreter its #! line names)\n' }],
    [1, 'bwrap: execvp ./script: Permission denied\n', { exitCode: 126, stderr: 'aalis: ./script: cannot run it in the sandbox (Permission denied)\n' }],
    [1, 'bwrap: Can\'t mount proc on /newroot/proc: Operation not permitted\n', undefined],
    [2, 'bwrap: execvp x: No such file or directory\n', undefined],
    [1, 'bwrap: execvp x: No such file or directory\nmore the command said\n', undefined],
  ] as const)('exit %s with %j', (exitCode, stderr, expected) => {
    expect(commandNotRun(exitCode, stderr)).toEqual(expected);
  });
});
