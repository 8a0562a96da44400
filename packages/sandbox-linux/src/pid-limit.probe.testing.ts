/**
 * Python run inside the sandbox by pid-limit.test.ts: forks up to argv[1] children that sleep,
 * stops at the first refusal, prints `forked <n> <errno name or none>`, then ends them.
 */
export const FORK_LOOP = `
import errno, os, sys, time
n = 0; err = 'none'; kids = []
for i in range(int(sys.argv[1])):
    try:
        p = os.fork()
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e.errno)); break
    if p == 0:
        time.sleep(5); os._exit(0)
    kids.append(p); n += 1
print('forked', n, err)
for p in kids:
    os.kill(p, 9)
`;

/** A build-like load: 40 jobs at once, each a process with 8 threads, like a parallel compile. */
export const BUILD_LIKE = `
import subprocess, sys
job = "import threading, time; ts = [threading.Thread(target=time.sleep, args=(0.3,)) for _ in range(8)]; [t.start() for t in ts]; [t.join() for t in ts]"
procs = [subprocess.Popen([sys.executable, '-c', job]) for _ in range(40)]
print('built', sum(p.wait() == 0 for p in procs))
`;
