import { z } from 'zod';

/**
 * Why the sandbox took an entry the command wrote away from where the command put it:
 * - `moved-aside`: a new entry the policy does not allow, moved out of the writable roots to `to`
 *   (the Linux look-based model; a host program may have made it, so it is kept);
 * - `deleted`: such an entry that could not be moved aside (or, in a container, any such entry)
 *   and was deleted;
 * - `kept-off`: a write the policy does not allow that was never made on the host (the Linux
 *   overlay model; kept for an answer when the run asked, see `keptWrites`);
 * - `conflict`: the command's version of an entry that changed on the host during the run; the
 *   host's version stays, the command's is at `to` when it could be kept.
 */
export const MOVED_ASIDE_REASONS = ['moved-aside', 'deleted', 'kept-off', 'conflict'] as const;
/** One of {@link MOVED_ASIDE_REASONS}. */
export type MovedAsideReason = (typeof MOVED_ASIDE_REASONS)[number];

/** One entry the sandbox removed or moved aside after (or while) a command ran: where it was, where it went, why. */
export const MovedAsideSchema = z
  .strictObject({
    /** The real path the command wrote. */
    path: z.string().min(1),
    /** Where it is now, when it was kept (moved aside, a conflict's copy). */
    to: z.string().min(1).optional(),
    reason: z.enum(MOVED_ASIDE_REASONS),
  })
  .readonly();
/** See {@link MovedAsideSchema}. */
export type MovedAside = z.infer<typeof MovedAsideSchema>;

/** The one line a run's stderr keeps about them, where a backend's README promises one. */
export function movedAsideSummary(entries: readonly MovedAside[]): string {
  if (entries.length === 0) return '';
  const n = entries.length;
  return `aalis: ${n} ${n === 1 ? 'entry' : 'entries'} this command wrote ${n === 1 ? 'was' : 'were'} moved aside or removed by the sandbox (the result's movedAside names each)\n`;
}
