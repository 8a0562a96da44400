import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename } from 'node:path';
import { realPathOfSync } from '@aalis/plugin-reach';

/*
 * Every sandboxed run makes about thirty files and folders in the daemon's temp directory (its run
 * folder, the overlay's layers and work folder, its FIFOs) and removes them after. On ext4 without
 * a journal the kernel then looks past every recently freed inode when it makes the next one: about
 * 11 ms of CPU a run on this project's test machines (stop 52's measurement), a third of a
 * `run_command true`. `aalis doctor` says which file system that directory is on, so a person who
 * runs many small commands can choose another (TMPDIR), knowing that a memory one holds each run's
 * writes in memory until they are committed.
 */

/** The file system the daemon's run folders go to. */
export interface RunFoldersFs {
  readonly dir: string;
  readonly source: string;
  readonly fstype: string;
  /** ext4 only: whether it has a journal (undefined where that cannot be read, or for other types). */
  readonly journal?: boolean;
}

/** Where `dir` (the temp directory by default) is mounted, from /proc/self/mountinfo; undefined where that cannot be read. */
export function runFoldersFs(dir = tmpdir()): RunFoldersFs | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined;
  }
  const real = realPathOfSync(dir);
  let best: { point: string; source: string; fstype: string } | undefined;
  for (const line of text.split('\n')) {
    const [pre, post] = line.split(' - ');
    if (pre === undefined || post === undefined) continue;
    const point = (pre.split(' ')[4] ?? '').replace(/\\040/g, ' ');
    const [fstype, source] = post.split(' ');
    if (fstype === undefined || source === undefined) continue;
    const under = real === point || point === '/' || real.startsWith(`${point}/`);
    if (under && (best === undefined || point.length >= best.point.length)) best = { point, source, fstype };
  }
  if (best === undefined) return undefined;
  const journal = best.fstype === 'ext4' ? journalOf(best.source) : undefined;
  return { dir: real, source: best.source, fstype: best.fstype, ...(journal === undefined ? {} : { journal }) };
}

/** Whether the ext4 file system on `source` has a journal: its jbd2 task, as the kernel names it. */
function journalOf(source: string): boolean | undefined {
  try {
    return readFileSync(`/sys/fs/ext4/${basename(source)}/journal_task`, 'utf8').trim() !== '<none>';
  } catch {
    return undefined;
  }
}

/** The doctor's line. */
export function describeRunFoldersFs(fs: RunFoldersFs | undefined): string {
  if (fs === undefined) return "runs' temp directory: its file system could not be read (/proc/self/mountinfo)\n";
  const kind = fs.fstype === 'tmpfs' ? 'tmpfs, in memory: each run\'s writes stay in memory until they are committed, and are copied then' : fs.journal === false ? `${fs.fstype} without a journal: making and removing each run's thirty or so folders and files costs the kernel about 11 ms of CPU a run (measured on such a machine); TMPDIR on another file system (a journaled one, or /dev/shm for small commands, whose writes then stay in memory) avoids it` : fs.fstype;
  return `runs' temp directory: ${fs.dir} on ${fs.source} (${kind})\n`;
}
