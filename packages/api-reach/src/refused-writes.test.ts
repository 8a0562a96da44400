import { describe, expect, it } from 'vitest';
import { type RefusedWriteCandidate, refusedWriteCandidates, refusedWritesIn } from './refused-writes.js';

const CWD = '/w/ws';
const t = (errno: RefusedWriteCandidate['errno'], path?: string): RefusedWriteCandidate => ({ errno, role: 'target', ...(path === undefined ? {} : { path }) });
const src = (errno: RefusedWriteCandidate['errno'], path: string): RefusedWriteCandidate => ({ errno, role: 'rename-source', path });

// Each line as the tool printed it on this machine (Debian 12: coreutils 9.1, dash, bash 5.2,
// Python 3, Node 20, git 2.39, npm 10) under a bubblewrap read-only mount (EROFS) and as nobody
// (EACCES); in the test container (busybox, --read-only root); and on macOS under Seatbelt
// (EPERM; copied from real runs, macOS is not available here).
describe('refusedWriteCandidates', () => {
  it.each([
    // linux, coreutils
    ['coreutils touch', "touch: cannot touch 'x': Read-only file system", [t('EROFS', '/w/ws/x')]],
    ['coreutils, a name with an apostrophe', 'touch: cannot touch "it\'s": Read-only file system', [t('EROFS', "/w/ws/it's")]],
    ['coreutils, a name that is not UTF-8', "touch: cannot touch ''$'\\377''bad': Read-only file system", [t('EROFS', '/w/ws/\uFFFDbad')]],
    ['coreutils, a newline in the name', "touch: cannot touch 'a'$'\\n''b': Read-only file system", [t('EROFS', '/w/ws/a\nb')]],
    ['coreutils, a space', "touch: cannot touch 'a b': Read-only file system", [t('EROFS', '/w/ws/a b')]],
    ['coreutils, a colon', "touch: cannot touch '/ro/x:y': Read-only file system", [t('EROFS', '/ro/x:y')]],
    ['coreutils mkdir, UTF-8 quotes', 'mkdir: cannot create directory ‘/ro/a b’: Read-only file system', [t('EROFS', '/ro/a b')]],
    ['coreutils rm', "rm: cannot remove 'keep': Read-only file system", [t('EROFS', '/w/ws/keep')]],
    ['coreutils mv', "mv: cannot move 'keep' to 'moved': Read-only file system", [src('EROFS', '/w/ws/keep'), t('EROFS', '/w/ws/moved')]],
    ['coreutils mv onto a pinned mount', "mv: cannot move 'x' to '/w/ws/.git': Device or resource busy", [src('EBUSY', '/w/ws/x'), t('EBUSY', '/w/ws/.git')]],
    ['coreutils cp', "cp: cannot create regular file 'c': Read-only file system", [t('EROFS', '/w/ws/c')]],
    ['coreutils ln', "ln: failed to create symbolic link 'l': Read-only file system", [t('EROFS', '/w/ws/l')]],
    ['coreutils as nobody', "touch: cannot touch 'x': Permission denied", [t('EACCES', '/w/ws/x')]],
    ['coreutils, relative with ..', 'touch: cannot touch ‘src/../y’: Read-only file system', [t('EROFS', '/w/ws/y')]],
    // shells
    ['bash, a script line', 'lines.sh: line 2: y: Read-only file system', [t('EROFS', '/w/ws/y')]],
    ['bash -c', 'bash: line 1: /ro/z2: Read-only file system', [t('EROFS', '/ro/z2')]],
    ['bash, not UTF-8 (as decoded)', 'bash: line 1: \uFFFDb: Read-only file system', [t('EROFS', '/w/ws/\uFFFDb')]],
    ['dash', 'sh: 1: cannot create z: Read-only file system', [t('EROFS', '/w/ws/z')]],
    ['dash as nobody', 'sh: 1: cannot create /root/x: Permission denied', [t('EACCES', '/root/x')]],
    ['dash onto a placeholder', 'sh: 1: cannot create .vscode: Is a directory', [t('EISDIR', '/w/ws/.vscode')]],
    // Python
    ['python open', "OSError: [Errno 30] Read-only file system: '/ro/p'", [t('EROFS', '/ro/p')]],
    ['python rename', "OSError: [Errno 30] Read-only file system: '/ro/keep' -> '/ro/k2'", [src('EROFS', '/ro/keep'), t('EROFS', '/ro/k2')]],
    ['python relative', "OSError: [Errno 30] Read-only file system: 'q'", [t('EROFS', '/w/ws/q')]],
    ['python, a double quote in the name', 'OSError: [Errno 30] Read-only file system: \'/ro/q"x\'', [t('EROFS', '/ro/q"x')]],
    ['python, bytes not UTF-8', "OSError: [Errno 30] Read-only file system: b'/ro/\\xffd'", [t('EROFS', '/ro/\uFFFDd')]],
    ['python as nobody', "PermissionError: [Errno 13] Permission denied: '/tmp/own/p'", [t('EACCES', '/tmp/own/p')]],
    ['python onto a placeholder', "IsADirectoryError: [Errno 21] Is a directory: '.vscode'", [t('EISDIR', '/w/ws/.vscode')]],
    // Node, npm
    ['node open', "Error: EROFS: read-only file system, open '/ro/n'", [t('EROFS', '/ro/n')]],
    ['node rename', "Error: EROFS: read-only file system, rename '/ro/keep' -> '/ro/n2'", [src('EROFS', '/ro/keep'), t('EROFS', '/ro/n2')]],
    ['node mkdir as nobody', "Error: EACCES: permission denied, mkdir '/tmp/own/nd'", [t('EACCES', '/tmp/own/nd')]],
    ['node, the code line of the error object', "  code: 'EROFS',", [t('EROFS')]],
    ['npm symlink (its source is not written)', "npm error rofs EROFS: read-only file system, symlink '../dep' -> '/ro/pkg/node_modules/dep'", [t('EROFS', '/ro/pkg/node_modules/dep')]],
    ['npm, the code line', 'npm error code EROFS', [t('EROFS')]],
    ['npm as nobody', "npm error Error: EACCES: permission denied, mkdir '/tmp/own/pkg/node_modules'", [t('EACCES', '/tmp/own/pkg/node_modules')]],
    // git
    ['git init', 'fatal: cannot mkdir g: Read-only file system', [t('EROFS', '/w/ws/g')]],
    ['git init, a space', 'fatal: cannot mkdir s p: Read-only file system', [t('EROFS', '/w/ws/s p')]],
    ['git config', 'error: could not lock config file .git/config: Read-only file system', [t('EROFS', '/w/ws/.git/config')]],
    ['git commit', "fatal: Unable to create '/ro/repo/.git/index.lock': Read-only file system", [t('EROFS', '/ro/repo/.git/index.lock')]],
    // a container (busybox)
    ['busybox touch', 'touch: x: Read-only file system', [t('EROFS', '/w/ws/x')]],
    ['busybox touch, an apostrophe', "touch: it's: Read-only file system", [t('EROFS', "/w/ws/it's")]],
    ['busybox touch, a space', 'touch: /w/ro/a b: Read-only file system', [t('EROFS', '/w/ro/a b')]],
    ['busybox mkdir', "mkdir: can't create directory '/opt': Read-only file system", [t('EROFS', '/opt')]],
    ['busybox mv', "mv: can't rename 'keep': Read-only file system", [t('EROFS', '/w/ws/keep')]],
    ['busybox sh', "sh: can't create y: Read-only file system", [t('EROFS', '/w/ws/y')]],
    ['busybox, /proc', "sh: can't create /proc/sys/kernel/hostname: Read-only file system", [t('EROFS', '/proc/sys/kernel/hostname')]],
    // macOS under Seatbelt
    ['BSD touch', 'touch: /Users/ana/out.txt: Operation not permitted', [t('EPERM', '/Users/ana/out.txt')]],
    ['BSD mv', 'mv: rename a to /Users/ana/b: Operation not permitted', [src('EPERM', '/w/ws/a'), t('EPERM', '/Users/ana/b')]],
    ['bash on macOS, a space', 'sh: /Users/ana/with space/x: Operation not permitted', [t('EPERM', '/Users/ana/with space/x')]],
    ['zsh', 'zsh:1: operation not permitted: /Users/ana/z', [t('EPERM', '/Users/ana/z')]],
    ['git on macOS', "fatal: could not create work tree dir 'clone': Operation not permitted", [t('EPERM', '/w/ws/clone')]],
    ['busybox kill (prose, no path)', "sh: can't kill pid 1: Operation not permitted", [t('EPERM')]],
    ['curl (prose, no path)', 'curl: (7) Failed to connect to example.org port 443: Operation not permitted', [t('EPERM')]],
    // cargo: the path on one line, its error in the chain below
    [
      'cargo, an unpack refused (Rust error chain)',
      'error: failed to unpack package `zzfoo v0.1.0`\n\nCaused by:\n  failed to create directory `/root/.cargo/registry/src/-7066d17006c4a5f7/zzfoo-0.1.0`\n\nCaused by:\n  Read-only file system (os error 30)',
      [t('EROFS', '/root/.cargo/registry/src/-7066d17006c4a5f7/zzfoo-0.1.0')],
    ],
    ['a Rust error too far below its path is not tied to it', 'failed to open `/x/y`\n\n\n\n\n\nRead-only file system (os error 30)', [t('EROFS')]],
    // nothing
    ['a plain failure', 'cat: /nope: No such file or directory', []],
    ['a line that names no error', "npm error path /ro/pkg/node_modules", []],
    ['empty', '', []],
  ])('%s', (_, line, expected) => {
    expect(refusedWriteCandidates(line, CWD)).toEqual(expected);
  });
});

describe('refusedWritesIn', () => {
  const stderr = ["touch: cannot touch '/a': Read-only file system", "touch: cannot touch '/a': Read-only file system", "touch: cannot touch '/b': Permission denied", 'npm error code EROFS'].join('\n');

  it('reports what the backend calls a refusal, each path once', () => {
    expect(refusedWritesIn(stderr, CWD, (c) => c.errno === 'EROFS')).toEqual({ denied: true, paths: ['/a'] });
  });

  it('is denied by a line without a path when the backend says so', () => {
    expect(refusedWritesIn('npm error code EROFS', CWD, (c) => c.errno === 'EROFS')).toEqual({ denied: true, paths: [] });
  });

  it('reports the path the backend names, and skips a candidate its test throws on', () => {
    const named = refusedWritesIn(stderr, CWD, (c) => {
      if (c.path === '/b') throw new Error('cannot judge');
      return c.path === undefined ? false : `/private${c.path}`;
    });
    expect(named).toEqual({ denied: true, paths: ['/private/a'] });
  });

  it('is not denied when the backend refuses none', () => {
    expect(refusedWritesIn(stderr, CWD, () => false)).toEqual({ denied: false, paths: [] });
  });
});
