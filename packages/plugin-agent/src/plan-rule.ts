import { join } from 'node:path';

/** The tool that hands a plan to the owner; offered only in plan mode. */
export const SUBMIT_PLAN = 'submit_plan';

/** A plan's name: one plain file-name stem, so the document can only land in the plan directory. */
export const PLAN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The one rule for the only write plan mode allows: the plan document is exactly
 * `<workspace>/.aalis/plan/<name>.md`, for a `name` of {@link PLAN_NAME} (no '/', no '..'). Every
 * plan write takes its path from here; the safe file layer then refuses a symlink anywhere on it.
 */
export function planPathOf(workspace: string, name: string): string {
  if (!PLAN_NAME.test(name) || name.includes('..')) {
    throw new TypeError(`'${name}' is not a plan name: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (no '/', no '..').`);
  }
  return join(workspace, '.aalis', 'plan', `${name}.md`);
}
