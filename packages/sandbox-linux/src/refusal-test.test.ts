import { refusedWritesIn } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { linuxRefusal } from './refusal-test.js';

// What the Linux backend makes of the lines api-reach reads; the real refusals are asserted by
// the sandboxed runs in service.test.ts and overlay.test.ts.
const CWD = '/w/ws';
const refusal = linuxRefusal(new Set(['/w/ws/.git', '/w/ws/.vscode', '/w/ws/.env']), new Set(['/w/ws/.vscode']));

describe('linuxRefusal', () => {
  it.each([
    ['dash', 'sh: 1: cannot create .envrc: Read-only file system', ['/w/ws/.envrc']],
    ['bash', 'bash: /etc/x: Read-only file system', ['/etc/x']],
    ['python', "OSError: [Errno 30] Read-only file system: '/etc/x'", ['/etc/x']],
    ['node, with its error object', "Error: EROFS: read-only file system, open '/etc/x'\n    errno: -30,\n  code: 'EROFS',", ['/etc/x']],
    ['git', 'error: could not lock config file .git/config: Read-only file system', ['/w/ws/.git/config']],
    ['mv (both ends are on the read-only mount)', "mv: cannot move 'keep' to 'moved': Read-only file system", ['/w/ws/keep', '/w/ws/moved']],
    ['rename onto a pinned mount', "mv: cannot move 'x' to '/w/ws/.git': Device or resource busy", ['/w/ws/.git']],
    ['mkdir over a placeholder', "mkdir: cannot create directory '.vscode': File exists", ['/w/ws/.vscode']],
    ['file under a placeholder', 'sh: 1: cannot create .vscode/tasks.json: Read-only file system', ['/w/ws/.vscode/tasks.json']],
    ['writing a placeholder (dash)', 'sh: 1: cannot create .vscode: Is a directory', ['/w/ws/.vscode']],
    ['writing a placeholder (python)', "IsADirectoryError: [Errno 21] Is a directory: '.vscode'", ['/w/ws/.vscode']],
    ['writing a placeholder (node)', "Error: EISDIR: illegal operation on a directory, open '/w/ws/.vscode'", ['/w/ws/.vscode']],
    ['EROFS without a path', 'npm error code EROFS', []],
  ])('%s', (_, stderr, paths) => {
    expect(refusedWritesIn(stderr, CWD, refusal)).toEqual({ denied: true, paths });
  });

  it.each([
    ['a plain failure', 'cat: /nope: No such file or directory\nexit 1'],
    ['EBUSY on something the sandbox did not mount', 'umount: /mnt: Device or resource busy'],
    ['EEXIST of an ordinary file', "mkdir: cannot create directory 'src': File exists"],
    ['EISDIR of an ordinary directory', 'sh: 1: cannot create src: Is a directory'],
    ['a permission problem (the host\'s, as nobody)', 'sh: 1: cannot create /root/x: Permission denied'],
    ['the kernel\'s own tree', 'sh: 1: cannot create /proc/sys/kernel/hostname: Read-only file system'],
    ['EPERM', "touch: cannot touch '/w/ws/.git/x': Operation not permitted"],
  ])('is not a refused write: %s', (_, stderr) => {
    expect(refusedWritesIn(stderr, CWD, refusal)).toEqual({ denied: false, paths: [] });
  });
});
