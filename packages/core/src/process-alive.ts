/**
 * Whether process `pid` exists: signal 0 reaches it, or it is another user's (EPERM). A pid of 0
 * or less is no process (signal 0 to it would reach a whole process group).
 */
export function processAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
