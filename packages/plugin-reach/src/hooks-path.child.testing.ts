/*
 * Run by hooks-path.test.ts in a process of its own, since what it checks is that nothing waits
 * for good (a read that blocks cannot be bounded from the same thread): hooksPathDirs(argv[2])
 * with the home argv[3] and the system config argv[4]; prints one line of JSON, the directories
 * or the error's code and message.
 */
import { hooksPathDirs } from './hooks-path.js';

try {
  process.stdout.write(`${JSON.stringify({ dirs: hooksPathDirs(process.argv[2]!, { userHome: process.argv[3]!, systemConfig: process.argv[4]! }) })}\n`);
} catch (e) {
  process.stdout.write(`${JSON.stringify({ code: (e as { code?: string }).code, message: (e as Error).message })}\n`);
}
