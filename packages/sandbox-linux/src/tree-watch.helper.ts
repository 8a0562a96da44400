/*
 * The inotify helper behind tree-index.ts, as Python source: Node has no inotify API that reports a
 * lost event (libuv drops IN_Q_OVERFLOW without a word), and an index that can miss a change
 * silently is worse than none. It watches every directory of the trees it is asked to (never
 * following a symlink), reads events all the time so its queue does not fill, and answers a sync
 * with every directory changed since the previous one. Paths travel as hex of their bytes.
 *
 * in:  {"op":"watch","root":hex}        out: {"op":"watched","root":hex,"ok":bool,"dirs":n,"why"?:str}
 * in:  {"op":"sync","id":n}             out: {"op":"synced","id":n,"changed":[hex],"replaced":[hex],"overflow":bool,"lost":[hex]}
 * `changed`: directories whose own entries changed; `replaced`: directories created, deleted or
 * moved (what was under that path before is not what is there now). A sync is answered only once
 * every new directory is watched, so no change can fall between a listing and its watch.
 */
export const TREE_WATCH_PY = String.raw`
import ctypes, json, os, select, signal, stat, struct, sys, tempfile
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))   # kill() from the daemon: clean up below
libc = ctypes.CDLL(None, use_errno=True)
IN_ATTRIB, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x4, 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_ISDIR = 0x1000000, 0x2000000, 0x40000000
MASK = IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW
MAX_CHANGED = 200000
fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
if fd < 0:
    print(json.dumps({"op": "fatal", "why": os.strerror(ctypes.get_errno())}), flush=True); sys.exit(1)
wd_path, path_wd, kids = {}, {}, {}   # kids: a watched directory's watched subdirectories
roots = {}          # root -> {"pending": [paths], "dirs": n, "failed": why or None}
changed, replaced, overflow, lost = set(), set(), False, set()
# a helper killed before it could clean up leaves its folder: those of dead helpers go at the next start
tmp = tempfile.gettempdir()
for n in os.listdir(tmp):
    if n.startswith("aalis-tree-watch-"):
        pid = n.split("-")[3] if n.count("-") >= 4 else ""
        if pid.isdigit() and not os.path.exists("/proc/" + pid):
            # only a folder of this user's: a local user's symlink of that name to /root had a root
            # daemon's helper remove /root/a and /root/b through it (found by an attack, h105)
            try: st = os.lstat(os.path.join(tmp, n))
            except OSError: continue
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid(): continue
            for f in ("a", "b"):
                try: os.unlink(os.path.join(tmp, n, f))
                except OSError: pass
            try: os.rmdir(os.path.join(tmp, n))
            except OSError: pass
sentinel_dir = tempfile.mkdtemp(prefix="aalis-tree-watch-%d-" % os.getpid())
# two sentinels in turn: the kernel merges an event identical to the last one still queued
sentinels = [os.path.join(sentinel_dir, n).encode() for n in ("a", "b")]
for f in sentinels: open(f, "wb").close()
sentinel_wd = libc.inotify_add_watch(fd, sentinel_dir.encode(), IN_ATTRIB)

def out(msg):
    sys.stdout.write(json.dumps(msg) + "\n"); sys.stdout.flush()

def root_of(p):
    for r in roots:
        if p == r or p.startswith(r + b"/"):
            return r
    return None

def add(p):
    wd = libc.inotify_add_watch(fd, p, MASK)
    if wd < 0:
        return ctypes.get_errno()
    old = wd_path.get(wd)
    if old is not None and old != p:
        path_wd.pop(old, None); forget(old)
    wd_path[wd] = p; path_wd[p] = wd
    kids.setdefault(p.rsplit(b"/", 1)[0], set()).add(p)
    return 0

def forget(p):
    kids.get(p.rsplit(b"/", 1)[0], set()).discard(p)

def drop_under(p):
    # through the kids map: a scan of every watch per removed directory cost seconds on 177,000
    stack = [p]
    forget(p)
    while stack:
        q = stack.pop()
        stack.extend(kids.pop(q, ()))
        wd = path_wd.pop(q, None)
        if wd is not None and wd_path.get(wd) == q:
            del wd_path[wd]
            libc.inotify_rm_watch(fd, wd)

def mark(p, into=None):
    global overflow
    into = changed if into is None else into
    if len(changed) + len(replaced) >= MAX_CHANGED:
        overflow = True
    else:
        into.add(p)

def fail(r, why):
    roots[r]["failed"] = why; roots[r]["pending"] = []
    drop_under(r); lost.add(r)
    out({"op": "watched", "root": r.hex(), "ok": False, "why": why})

def step(budget):
    # watch first, then list: a change after the watch is an event, one before it is in the listing
    # directories new in trees already trusted first: a sync waits for them
    for r, st in sorted(roots.items(), key=lambda kv: not kv[1].get("done")):
        while st["pending"] and budget > 0 and not st["failed"]:
            p = st["pending"].pop(); budget -= 1
            err = add(p)
            if err in (2, 20, 40):   # ENOENT, ENOTDIR, ELOOP: gone or swapped, its parent saw it
                continue
            if err == 13:            # EACCES: the walk reports it unreadable; its parent's watch sees a chmod
                continue
            if err:
                fail(r, "inotify_add_watch: " + os.strerror(err)); break
            st["dirs"] += 1
            try:
                with os.scandir(p) as it:
                    for e in it:
                        if e.is_dir(follow_symlinks=False):
                            st["pending"].append(e.path)
            except OSError:
                pass
        if not st["pending"] and not st["failed"] and not st.get("done"):
            st["done"] = True   # new subtrees later are watched before the next sync is answered
            out({"op": "watched", "root": r.hex(), "ok": True, "dirs": st["dirs"]})
    return budget

def read_events():
    global overflow
    seen_sentinel = 0
    while True:
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            return seen_sentinel
        i = 0
        while i < len(buf):
            wd, mask, _cookie, n = struct.unpack_from("iIII", buf, i)
            name = buf[i + 16:i + 16 + n].rstrip(b"\0"); i += 16 + n
            if mask & IN_Q_OVERFLOW:
                overflow = True; continue
            if wd == sentinel_wd:
                seen_sentinel += 1; continue
            p = wd_path.get(wd)
            if p is None:
                continue
            mark(p)
            if mask & IN_IGNORED:
                wd_path.pop(wd, None)
                if path_wd.get(p) == wd:
                    del path_wd[p]; forget(p)
                if p in roots: lost.add(p)
                continue
            if mask & (IN_MOVE_SELF | IN_DELETE_SELF | IN_UNMOUNT) and p in roots:
                lost.add(p)
            if name and mask & IN_ISDIR:
                child = p + b"/" + name
                if not mask & (IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_MOVED_TO):
                    mark(child)          # its mode or owner: can it still be listed?
                    continue
                mark(child, replaced)
                if mask & (IN_MOVED_FROM | IN_DELETE):
                    drop_under(child)
                if mask & (IN_CREATE | IN_MOVED_TO):
                    r = root_of(child)
                    if r is not None and not roots[r]["failed"]:
                        roots[r]["pending"].append(child)

pending_syncs, barriers, turn, inbuf = [], 0, 0, b""
try:
  while True:
      busy = any(st["pending"] for st in roots.values())
      ready, _, _ = select.select([0, fd], [], [], 0 if busy else None)
      if fd in ready or busy:
          barriers += read_events()
      lines = []
      if 0 in ready:
          data = os.read(0, 65536)
          if not data:
              break   # the daemon is gone
          inbuf += data
          *lines, inbuf = inbuf.split(b"\n")
      for line in lines:
          msg = json.loads(line)
          if msg["op"] == "watch":
              r = bytes.fromhex(msg["root"])
              if r not in roots or roots[r]["failed"]:
                  roots[r] = {"pending": [r], "dirs": 0, "failed": None}
                  lost.discard(r)
          elif msg["op"] == "sync":
              os.utime(sentinels[turn]); turn ^= 1
              pending_syncs.append(msg["id"])   # the barrier: every change made before this is queued before its event
      if busy:
          step(500)
      # a sync is answered once its own barrier came through and every new directory is watched
      # (a tree still being watched for the first time is not trusted yet: it does not hold syncs up)
      while barriers > 0 and pending_syncs and not any(st["pending"] and st.get("done") for st in roots.values()):
          sid = pending_syncs.pop(0); barriers -= 1
          out({"op": "synced", "id": sid, "changed": [p.hex() for p in changed], "replaced": [p.hex() for p in replaced], "overflow": overflow, "lost": [r.hex() for r in lost]})
          changed.clear(); replaced.clear(); overflow = False; lost.clear()
finally:
    for f in sentinels:
        try: os.unlink(f)
        except OSError: pass
    try: os.rmdir(sentinel_dir)
    except OSError: pass
`;
