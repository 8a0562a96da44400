import { ToolError } from '@aalis/core';
import { PathRefusedError, realPathOf } from '@aalis/plugin-reach';

/**
 * Reach's real path of a path a tool was given, with a path no file can have (a NUL byte, a lone
 * surrogate, over PATH_MAX or NAME_MAX) refused by its rule (`denied`, as the safe file layer's
 * refusals are), naming the parameter and what to do, rather than as the system's error text.
 */
export async function toolPathOf(path: string, base: string, param: string): Promise<string> {
  try {
    return await realPathOf(path, base);
  } catch (error) {
    if (error instanceof PathRefusedError) throw new ToolError('denied', `'${param}' was refused (rule: ${error.code}): ${error.message}${error.fix ? ` Fix: ${error.fix}` : ''}`);
    throw error;
  }
}
