/**
 * Python that holds opens of a directory (for tests that stop a scan at an exact point): a
 * fanotify group `fd` with permission events (the opener waits for the answer) on every open of
 * the directory argv[1], then "ready" on stdout. What follows it reads the events and answers them.
 */
export const FANOTIFY_OPENS_PY = `
import ctypes, os, select, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
fd = libc.fanotify_init(0x4 | 0x1, os.O_RDONLY)  # FAN_CLASS_CONTENT | FAN_CLOEXEC
if fd < 0 or libc.fanotify_mark(fd, 0x1, 0x10000 | 0x40000000, -100, sys.argv[1].encode()) != 0: sys.exit("fanotify: %d" % ctypes.get_errno())
print("ready", flush=True)
`;
