/**
 * The names git looks for when it takes a folder for a git directory (`is_git_directory`):
 * `HEAD`, and `objects` and `refs` in the common directory, which is the folder itself or where a
 * `commondir` in it says.
 */
export const GIT_DIR_MARK_NAMES = ['HEAD', 'objects', 'refs', 'commondir'] as const;

/**
 * Whether git would take a folder for a git directory, given which of {@link GIT_DIR_MARK_NAMES}
 * it holds (`present`): a HEAD with objects and refs, or a HEAD with a commondir. Git does so
 * before it looks for a `.git` above, then reads the folder's config and runs its hooks.
 */
export function takenForGitDir(present: (name: (typeof GIT_DIR_MARK_NAMES)[number]) => boolean): boolean {
  return present('HEAD') && (present('commondir') || (present('objects') && present('refs')));
}
