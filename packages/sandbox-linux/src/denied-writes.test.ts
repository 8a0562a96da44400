import { describe, expect, it } from 'vitest';
import { deniedWritesOf } from './denied-writes.js';

const CWD = '/w/ws';
const mounted = new Set(['/w/ws/.git', '/w/ws/.vscode', '/w/ws/.env']);
const placeholders = new Set(['/w/ws/.vscode']);

describe('deniedWritesOf', () => {
  it.each([
    ['dash', 'sh: 1: cannot create .envrc: Read-only file system', ['/w/ws/.envrc']],
    ['bash', 'bash: /etc/x: Read-only file system', ['/etc/x']],
    ['coreutils', "touch: cannot touch '/usr/x': Read-only file system", ['/usr/x']],
    ['coreutils, UTF-8 quotes', 'touch: cannot touch ‘src/../y’: Read-only file system', ['/w/ws/y']],
    ['python', "OSError: [Errno 30] Read-only file system: '/etc/x'", ['/etc/x']],
    ['node', "Error: EROFS: read-only file system, open '/etc/x'\n    errno: -30,\n  code: 'EROFS',", ['/etc/x']],
    ['git', "error: could not lock config file .git/config: Read-only file system", ['/w/ws/.git/config']],
    ['rename onto a pinned mount', "mv: cannot move 'x' to '/w/ws/.git': Device or resource busy", ['/w/ws/.git']],
    ['mkdir over a placeholder', "mkdir: cannot create directory '.vscode': File exists", ['/w/ws/.vscode']],
    ['file under a placeholder', "sh: 1: cannot create .vscode/tasks.json: Read-only file system", ['/w/ws/.vscode/tasks.json']],
    ['writing a placeholder (dash)', 'sh: 1: cannot create .vscode: Is a directory', ['/w/ws/.vscode']],
    ['writing a placeholder (python)', "IsADirectoryError: [Errno 21] Is a directory: '.vscode'", ['/w/ws/.vscode']],
    ['writing a placeholder (node)', "Error: EISDIR: illegal operation on a directory, open '/w/ws/.vscode'", ['/w/ws/.vscode']],
  ])('%s', (_, stderr, paths) => {
    expect(deniedWritesOf(stderr, CWD, mounted, placeholders)).toEqual({ denied: true, paths });
  });

  it.each([
    ['a plain failure', 'cat: /nope: No such file or directory\nexit 1'],
    ['EBUSY on something the sandbox did not mount', "umount: /mnt: Device or resource busy"],
    ['EEXIST of an ordinary file', "mkdir: cannot create directory 'src': File exists"],
    ['EISDIR of an ordinary directory', 'sh: 1: cannot create src: Is a directory'],
    ['a permission problem', "sh: 1: cannot create /root/x: Permission denied"],
  ])('is not a refused write: %s', (_, stderr) => {
    expect(deniedWritesOf(stderr, CWD, mounted, placeholders).denied).toBe(false);
  });
});
