import { lstatSync, mkdirSync, readFileSync, realpathSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { AalisError } from '@aalis/core';

/**
 * A directory of this user's that another user could read or change: the data directory (its
 * token, grants, audit log, conversations) or the daemon registry. Every command refuses to use
 * one, before anything in it is read or written.
 */
export class NotOwnDirError extends AalisError<'dir-not-own'> {
  override readonly name = 'NotOwnDirError';
}

const euid = () => process.geteuid?.();

/** The lines of a colon-separated system file (/etc/group, /etc/passwd), split; none when it cannot be read. */
function table(file: string): string[][] {
  try {
    return readFileSync(file, 'utf8').split('\n').map((line) => line.split(':'));
  } catch {
    return [];
  }
}

/**
 * Whether this user is the only member of group `gid`: its primary group, which /etc/group lists
 * with no other member and no other account in /etc/passwd has as its primary group (a user
 * private group, as Debian and Fedora make one for each person, whose umask 002 makes their
 * directories group-writable). A group these files do not show (from a directory service) counts
 * as shared.
 */
function soleGroup(gid: number): boolean {
  if (gid !== process.getegid?.()) return false;
  const uid = euid();
  const me = table('/etc/passwd').find((f) => Number(f[2]) === uid)?.[0];
  const group = table('/etc/group').find((f) => Number(f[2]) === gid);
  if (me === undefined || group === undefined) return false;
  const members = (group[3] ?? '').split(',').filter((m) => m !== '' && m !== me);
  const sharing = table('/etc/passwd').some((f) => f.length > 3 && Number(f[3]) === gid && f[0] !== me);
  return members.length === 0 && !sharing;
}

/** Whether anyone but its owner may write a directory: others, or a group with someone else in it. */
function othersMayWrite(st: Stats): boolean {
  return (st.mode & 0o002) !== 0 || ((st.mode & 0o020) !== 0 && !soleGroup(st.gid));
}

/** Who may change a directory's entries besides its owner: others may write it, and no sticky bit holds them to their own. */
function othersMayReplace(st: Stats): boolean {
  return othersMayWrite(st) && (st.mode & 0o1000) === 0;
}

/**
 * Makes `path` (0700, with its missing parents) unless it is there, and refuses it unless it is
 * this user's own: a real directory (the path may reach it through symlinks; the directory itself
 * is judged at its real path), owned by this user, writable by nobody else (a group-writable one
 * is fine when the group has no other member), and inside ancestors in which nobody else may
 * rename or replace entries (writable by others without the sticky bit). Before this, a daemon started on a data directory another user had made first (under
 * `/tmp`, say) wrote its token into that user's file, or through that user's symlink.
 *
 * Ancestors owned by another user are not refused: a root daemon in a project under a person's
 * home is the usual case, and that person could change the project already.
 *
 * @param what how the refusal names the directory ("the data directory").
 * @param how how a user picks another one ("--data DIR").
 */
export function ownDir(path: string, what: string, how: string): string {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (error) {
    // something else is there: refused below, by what it is
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const uid = euid();
  if (uid === undefined) return path; // no owners to compare (not POSIX)
  const real = realpathSync(path);
  const st = lstatSync(real);
  const refuse = (why: string, fix: string): never => {
    throw new NotOwnDirError('dir-not-own', `${what} ${real}${real === path ? '' : ` (${path})`} ${why}, so another user could read or replace what aalis keeps there (its token, grants, audit log); nothing was read or written in it.`, { fix: `${fix}, or use another directory (${how}).` });
  };
  if (!st.isDirectory()) refuse('is not a directory', `remove it`);
  if (st.uid !== uid) refuse(`belongs to uid ${st.uid}, not to this user (uid ${uid})`, `check who made it; if it is yours to take, \`chown ${uid} ${real}\``);
  if (othersMayWrite(st)) refuse(`is writable by its group or by others (mode ${(st.mode & 0o7777).toString(8)})`, `\`chmod go-w ${real}\``);
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    const up = lstatSync(dir);
    if (othersMayReplace(up)) refuse(`lies in ${dir}, where others may rename or replace entries (mode ${(up.mode & 0o7777).toString(8)}, no sticky bit)`, `\`chmod go-w ${dir}\` or \`chmod +t ${dir}\``);
    if (dirname(dir) === dir) break;
  }
  return path;
}
