/**
 * A Python probe run inside the sandbox by kernel-surface.test.ts: for each kernel file it tries
 * what the command must not do (write a sysctl, open knobs for writing, write sysfs) and read what
 * must not leak, and prints one JSON object: path → `ok` or the errno name, and the byte count of
 * each masked file it could read.
 */
export const KERNEL_PROBE = `
import errno, json, os, sys
out = {}
def attempt(path, data=None):
    try:
        with open(path, 'w') as f:
            if data is not None:
                f.write(data)
        out['w:' + path] = 'ok'
    except OSError as e:
        out['w:' + path] = errno.errorcode.get(e.errno, str(e.errno))
attempt('/proc/sys/kernel/printk_ratelimit', sys.argv[1] + '\\n')
attempt('/proc/sys/kernel/core_pattern')
attempt('/proc/sysrq-trigger')
attempt('/proc/sys/vm/drop_caches')
attempt('/sys/kernel/mm/ksm/run', '0\\n')
attempt('/sys/kernel/mm/transparent_hugepage/enabled')
for p in ('/proc/keys', '/proc/timer_list', '/proc/kmsg', '/proc/sched_debug', '/proc/kcore'):
    try:
        with open(p, 'rb') as f:
            out['r:' + p] = len(f.read(4096))
    except OSError as e:
        out['r:' + p] = errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps(out))
`;

/** The probe's verdicts: every write refused (or the file absent), every masked file empty or unreadable. */
export function kernelProbeHeld(out: Record<string, string | number>): string[] {
  const bad: string[] = [];
  for (const [k, v] of Object.entries(out)) {
    if (k.startsWith('w:') && !['EROFS', 'EACCES', 'EPERM', 'ENOENT'].includes(String(v))) bad.push(`${k}=${v}`);
    if (k.startsWith('r:') && typeof v === 'number' && v > 0) bad.push(`${k}=${v} bytes`);
  }
  return bad;
}
