import type { Readable } from 'node:stream';

/**
 * Whether bwrap exec'd the command, from its `--json-status-fd` stream: bwrap writes
 * `{ "exit-code": N }` there at the end only when its exec succeeded (a byte on a close-on-exec
 * pipe written just before the exec, which its monitor reads), never after a setup error of its
 * own. bwrap's messages and the command's share one stderr, so its text cannot tell them apart:
 * a command that prints `bwrap: ...` and exits 1 was taken for a failed setup, retried (run again)
 * and reported as "nothing was run". Attach before anything else reads `info` (a stream that
 * flows with no listener drops what it reads). Resolves true once the exit is reported, false at
 * the stream's end without it.
 */
export function watchExec(info: Readable): Promise<boolean> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += d.toString('latin1');
      if (/"exit-code"\s*:/.test(text)) done(true);
      else if (text.length > 65_536) text = text.slice(-256); // bwrap writes a few lines; keep the tail only
    };
    const onEnd = () => done(false);
    function done(ran: boolean) {
      info.off('data', onData);
      info.off('end', onEnd);
      info.off('close', onEnd);
      info.off('error', onEnd);
      resolve(ran);
    }
    info.on('data', onData);
    info.on('end', onEnd);
    info.on('close', onEnd);
    info.on('error', onEnd);
  });
}
