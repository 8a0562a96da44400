import { lstatSync, mkdirSync, readFileSync, realpathSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { AalisError } from '@aalis/core';

/**
 * A directory of this user's that another user could read or change: the data directory (its
 * token, grants, audit log, conversations) or the daemon registry. Every command refuses to use
 * one, before anything in it is read or written.
 */
export class NotOwnDirError extends AalisError<'dir-not-own'> {
  override readonly name = 'NotOwnDirError';
}

/** A directory named by hand (`--data`, `AALIS_DATA`) whose parent is not there: a typo, most likely, made nothing. */
export class MissingParentError extends AalisError<'dir-missing-parent'> {
  override readonly name = 'MissingParentError';
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
 * Whether group `gid` has no member but the account `uid`: that account's primary group, which
 * /etc/group lists with no other member and no other account in /etc/passwd has as its primary
 * group (a user private group, as Debian and Fedora make one for each person, whose umask 002
 * makes their directories group-writable). A group these files do not show (from a directory
 * service) counts as shared.
 */
function soleGroupOf(gid: number, uid: number): boolean {
  const passwd = table('/etc/passwd');
  const account = passwd.find((f) => Number(f[2]) === uid);
  const group = table('/etc/group').find((f) => Number(f[2]) === gid);
  if (account === undefined || group === undefined || Number(account[3]) !== gid) return false;
  const members = (group[3] ?? '').split(',').filter((m) => m !== '' && m !== account[0]);
  const sharing = passwd.some((f) => f.length > 3 && Number(f[3]) === gid && f[0] !== account[0]);
  return members.length === 0 && !sharing;
}

/**
 * Whether anyone but its owner may rename or replace a directory's entries: it is writable by
 * others, or by a group with someone else in it (the owner's private group is the owner), and no
 * sticky bit holds them to their own. An ACL granting another user write shows in the group bits
 * (the mask) of a directory's mode, but its group may still be a private one: for the data
 * directory itself any group write is refused ({@link ownDir}); for the directories above it, an
 * ACL on a user-private-group directory is not seen.
 */
function othersMayReplace(st: Stats): boolean {
  if ((st.mode & 0o1000) !== 0) return false;
  return (st.mode & 0o002) !== 0 || ((st.mode & 0o020) !== 0 && !soleGroupOf(st.gid, st.uid));
}

/** The nearest of `path` and its ancestors that exists (lexically: `..` and symlinks as written). */
function nearestExisting(path: string): string {
  for (let p = resolve(path); ; p = dirname(p)) {
    if (lstatSync(p, { throwIfNoEntry: false }) !== undefined || dirname(p) === p) return p;
  }
}

/**
 * Refuses `path` unless it is this user's own directory: owned by this user, with no group or
 * other write bit (an ACL's grant shows there), and every directory above it, both on the way
 * written (a symlink is followed from where it sits, so whoever may replace it chooses where the
 * path leads) and on its real path, one in which nobody else may rename or replace entries
 * (writable by others, or by a group with another member, without the sticky bit). Before, a
 * daemon started on a data directory another user had made first (under `/tmp`, say) wrote its
 * token into that user's file, or through that user's symlink; an ACL, or a symlink in a
 * directory anyone may write, let another user do the same (found by attacks). The directories
 * above are judged before the missing ones are made (0700), so a refusal leaves nothing behind.
 *
 * Ancestors owned by another user are not refused: a root daemon in a project under a person's
 * home is the usual case, and that person could change the project already.
 *
 * @param what how the refusal names the directory ("the data directory").
 * @param how how a user picks another one ("--data DIR").
 * @param create make it (0700, with its missing parents) when it is not there; `leaf`: make it only
 *   where its parent is there (a directory named by hand: a mistyped `--data /nonexistent/x` made a
 *   fresh data directory with an empty audit log, silently); without, a missing one is returned as
 *   it is (a client then finds no daemon there).
 */
export function ownDir(path: string, what: string, how: string, create: boolean | 'leaf' = true): string {
  const uid = euid();
  const refuse = (shown: string, why: string, fix: string, risk = ', so another user could read or replace what aalis keeps there (its token, grants, audit log)'): never => {
    throw new NotOwnDirError('dir-not-own', `${what} ${shown}${shown === path ? '' : ` (${path})`} ${why}${risk}; nothing was read or written in it.`, { fix: `${fix}, or use another directory (${how}).` });
  };
  const judgeAbove = (from: string, itself?: string) => {
    for (let dir = from; ; dir = dirname(dir)) {
      const up = lstatSync(dir);
      if (up.isSymbolicLink()) {
        // a link is judged by who may point it elsewhere: its owner (its mode says nothing), and
        // whoever may replace it in the directory above, judged next
        if (up.uid !== 0 && up.uid !== uid) refuse(path, `is reached through the symlink ${dir}, which belongs to uid ${up.uid}, who may point it elsewhere`, `name the directory it leads to (${realpathSync.native(dir)}) instead`);
      } else if (dir !== itself && othersMayReplace(up)) {
        refuse(path, `lies in ${dir}, where others may rename or replace entries (mode ${(up.mode & 0o7777).toString(8)}, no sticky bit)`, `\`chmod go-w ${dir}\` or \`chmod +t ${dir}\``);
      }
      if (dirname(dir) === dir) break;
    }
  };
  if (uid !== undefined) {
    // the way as written (the directory itself too, when it is a link: judged below as a directory
    // otherwise), then where it really leads, up to what exists now
    const existing = nearestExisting(path);
    judgeAbove(existing, resolve(path));
    judgeAbove(dirname(realpathSync.native(existing)));
  }
  if (create) {
    try {
      mkdirSync(path, { recursive: create === true, mode: 0o700 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new MissingParentError('dir-missing-parent', `${what} ${path} was not made: its parent ${dirname(resolve(path))} is not there (a typo?); nothing was made.`, { fix: `check the path, or make ${dirname(resolve(path))} first (${how}).` });
      // something else is there: refused below, by what it is
      if (code !== 'EEXIST') throw error;
    }
  } else if (lstatSync(path, { throwIfNoEntry: false }) === undefined) return path;
  if (uid === undefined) return path; // no owners to compare (not POSIX)
  const real = realpathSync.native(path);
  const st = lstatSync(real);
  if (!st.isDirectory()) refuse(real, 'is not a directory', 'check the path', '');
  if (st.uid !== uid) refuse(real, `belongs to uid ${st.uid}, not to this user (uid ${uid})`, `check who made it; if it is yours to take, \`chown ${uid} ${real}\``);
  if ((st.mode & 0o022) !== 0) refuse(real, `is writable by its group or by others (mode ${(st.mode & 0o7777).toString(8)}; an ACL's grant shows in the group bits)`, `\`chmod go-w ${real}\` (and \`setfacl -b ${real}\` where an ACL grants it)`);
  judgeAbove(dirname(real));
  return path;
}
