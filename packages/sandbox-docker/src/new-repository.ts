import { lstatSync } from 'node:fs';
import { INERT_GIT_CONFIG_MAX_BYTES, type NewGitDirEntry, NewGitDirJudge, type NewGitDirVerdict, readRegularSync } from '@aalis/core';
import { walk, type WalkEntry } from './host-walk.js';

/*
 * A `.git` folder a one-shot run made where the host had none (`git init`, `git clone`): core's
 * NewGitDirJudge reads it from the host after the container has stopped, so nothing of the
 * command's changes it meanwhile. An inert one (hooks only git's samples, a config of only what git
 * writes when it makes a repository, no link) is data and stays; anything else is removed whole,
 * as every new `.git` was before, with the reason said. A session's container runs on after the
 * check, so there it is removed whole still (see the README's known limits).
 */

function kindOf(entry: WalkEntry): NewGitDirEntry['kind'] {
  return entry.isSymbolicLink ? 'link' : entry.isDirectory ? 'dir' : entry.isFile ? 'file' : 'other';
}

/** A file's number of names; 0 (not inert) when it cannot be told. */
function linksOf(path: Buffer): number {
  try {
    return Number(lstatSync(path, { bigint: true }).nlink);
  } catch {
    return 0;
  }
}

/** Judges the new `.git` folder `dir` on the host, walked without following a link. */
export async function newRepositoryVerdict(dir: WalkEntry, budget: { left: number }): Promise<NewGitDirVerdict> {
  const judge = new NewGitDirJudge();
  let why = judge.problem({ rel: '', kind: kindOf(dir), links: 1 }, () => ({ kind: 'missing' }));
  let unlisted: string | undefined;
  if (why === undefined) {
    await walk(
      dir,
      budget,
      (entry) => {
        if (why !== undefined) return false;
        if (!entry.utf8) {
          why = 'a name in it is not UTF-8, which this does not read';
          return false;
        }
        const rel = entry.path.slice(dir.path.length + 1);
        const kind = kindOf(entry);
        // the link count of a config: docker writes in place, so another name would change it later
        const links = kind === 'file' && rel === 'config' ? linksOf(entry.bytes) : 1;
        why = judge.problem({ rel, kind, links }, () => readRegularSync(entry.bytes, { maxBytes: INERT_GIT_CONFIG_MAX_BYTES, follow: false }));
        return why === undefined && entry.isDirectory;
      },
      (entry) => {
        unlisted ??= entry.path;
      },
    );
  }
  if (why === undefined && unlisted !== undefined) why = `${unlisted} could not be listed`;
  return why === undefined ? { inert: true } : { inert: false, why };
}
