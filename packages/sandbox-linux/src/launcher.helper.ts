/*
 * The kept-alive launcher (launcher.ts) as Python source, run once per service as
 *
 *   python3 -I -S -c LAUNCHER_PY <the daemon's pid>
 *
 * with the fixed launch environment (launch-env.ts). It reads JSON lines on stdin and answers on
 * stdout, each carrying the run's id; only the daemon holds those pipes (no named socket):
 *
 *   {"op":"prepare","id","dir"}   mkfifo dir/{in,out,err,info,sync} (0600); the read ends of `in`
 *                                 and `sync` opened here, so the daemon can open their write ends
 *                                 -> {"id","prepared":true} | {"id","error"}
 *   {"op":"start","id","argv","env","rootMap","userStep"?,"fds","stdin"}
 *                                 fork a child: it opens its ends of the FIFOs, writes fds 3 (seccomp),
 *                                 6 (args) and 7 (env) as memfds, then runs root_map_in_view() with the
 *                                 view kept here, or root_map() (root-map.helper.ts, the one-shot step's
 *                                 function) where none could be made, or (userStep) an ordinary user's
 *                                 overlay step user_step(), or execs argv          -> {"id","pid"}
 *   {"op":"nft","id","pid","rules","library"}
 *                                 the localPorts filter without an nft process: fork a child that puts
 *                                 its ends of out, err and info on 1, 2 and 4, joins the network
 *                                 namespace of `pid` (never the launcher's own) and applies `rules`
 *                                 with libnftables (`library`, loaded once here, before the fork); it
 *                                 exits 0 only with the whole script in place, else 1 with nft's
 *                                 message on err                                  -> {"id","pid"}
 *   {"op":"kill","id"}            SIGKILL to the child, only while it is not reaped (its pid is still ours)
 *   {"op":"drop","id"}            a prepared run that will not start: its ends closed
 *   {"op":"view","argv"}          the idmapped view for the range argv = [base, count] made now, not
 *                                 at the next run's start (see View below); no answer
 * and on its own, for every child reaped: {"id","exit"} or {"id","signal"}. It is its runs' subreaper:
 * what they leave without a parent (the sandbox's pid 1, after bwrap's monitor) is reaped here.
 * It dies with the daemon (PR_SET_PDEATHSIG, then a check the daemon is still its parent), and so
 * does every bwrap it started (`--die-with-parent` is relative to the launcher).
 */
import { ROOT_MAP_LIB_PY } from './root-map.helper.js';

/** The launcher's program: the root map's library, then the loop. */
export const LAUNCHER_PY = `${ROOT_MAP_LIB_PY}
${String.raw`
import _json, binascii, fcntl, select, time
# JSON and base64 through their C modules: the json and base64 packages import re (and enum), a
# third of this interpreter's start, which every aalis exec run as root waits for or shares a core with
class _JsonSettings:
    strict, object_hook, object_pairs_hook, parse_float, parse_int, parse_constant = True, None, None, float, int, None
_scan = _json.make_scanner(_JsonSettings())
_quote = _json.encode_basestring_ascii

def json_loads(line):
    # one value per line, as json.loads: anything else (or after it) is an error, which ends the launcher
    s = line.decode("utf-8")
    try: value, end = _scan(s, 0)
    except StopIteration: raise ValueError("the daemon sent a line that is not JSON")
    if s[end:].strip(" \t\r\n"): raise ValueError("the daemon sent more than one JSON value on a line")
    return value

def json_dumps(msg):
    # the launcher's answers: flat objects of ints, booleans and strings (ASCII, as json.dumps writes them)
    def value(v):
        if v is True or v is False: return "true" if v else "false"
        if isinstance(v, int): return str(int(v))
        return _quote(str(v))
    return "{" + ",".join(_quote(k) + ":" + value(v) for k, v in msg.items()) + "}"
PR_SET_PDEATHSIG = 1
libc.prctl(PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)
if os.getppid() != int(sys.argv[1]): os._exit(0)   # the daemon died before the prctl
# Whatever a run leaves without a parent is reaped here (the loop's reap takes any child), not by
# the host's init: bwrap's monitor returns as soon as the sandbox's pid 1 reports the command's
# exit, without waiting for that pid 1, so every run left one orphan. An init that reaps late (a
# VM's or a container's; none at all where the daemon is a container's pid 1) kept them as
# zombies, dozens at a time here, which every run's look through /proc (its sockets) paid for.
# Not inherited by the children forked here; where the kernel lacks it, init reaps as before.
PR_SET_CHILD_SUBREAPER = 36
libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
# a terminal's ^C is the daemon's to handle; the launcher goes with the daemon
_signal.signal(_signal.SIGINT, _signal.SIG_IGN)
wake_r, wake_w = os.pipe()
os.set_blocking(wake_r, False); os.set_blocking(wake_w, False)
_signal.set_wakeup_fd(wake_w)
_signal.signal(_signal.SIGCHLD, lambda *a: None)
launcher = os.getpid()
prepared = {}   # id -> (dir, stdin read end, sync read end)
children = {}   # pid -> id, until reaped
by_id = {}      # id -> pid, until reaped

def send(msg):
    data = (json_dumps(msg) + "\n").encode()
    while data:
        data = data[os.write(1, data):]

NAMES = ("in", "out", "err", "info", "sync")

def prepare(m):
    d = os.fsencode(m["dir"])
    for n in NAMES: os.mkfifo(os.path.join(d, n.encode()), 0o600)
    # held open here (non-blocking, so the open does not wait for a writer) until the child has its own
    rin = os.open(os.path.join(d, b"in"), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try: rsync = os.open(os.path.join(d, b"sync"), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        os.close(rin); raise   # the run fails (its error sent); the launcher keeps nothing of it
    prepared[m["id"]] = (d, rin, rsync)

def memfd(data):
    fd = os.memfd_create("aalis", os.MFD_CLOEXEC)
    view = memoryview(data)
    while view: view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd

def child(m, d, rin, rsync, v):
    # before anything else: a child whose launcher is gone must not go on to run a command
    libc.prctl(PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)
    if os.getppid() != launcher: os._exit(125)
    _signal.set_wakeup_fd(-1)
    # the daemon's ends are open (it said start): a FIFO it closed since is ENXIO here, never a wait
    w = lambda n: os.open(os.path.join(d, n), os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    err = w(b"err")
    os.set_blocking(err, True)
    os.dup2(err, 2)
    try:
        # the view's descriptors may sit where the run's are placed: moved above them first
        if v: v = v.moved()
        place = {1: w(b"out"), 4: w(b"info"), 5: rsync, 0: rin if m["stdin"] else os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)}
        for n, data in m["fds"].items(): place[int(n)] = memfd(binascii.a2b_base64(data))
        # every source above the targets first, so no dup2 overwrites one not yet placed
        high = {t: fcntl.fcntl(f, fcntl.F_DUPFD_CLOEXEC, 10) for t, f in place.items()}
        for t, f in high.items():
            os.dup2(f, t)
            os.set_blocking(t, True)
        # nothing else of the launcher's reaches bwrap: every fd not placed is closed (the view's, kept
        # above the placed ones until the step below closes them, are close-on-exec as well)
        for fd in range(3, 8):
            if fd not in high: os.closerange(fd, fd + 1)
        low = 8
        for fd in sorted(v.fds() if v else ()):
            os.closerange(low, fd); low = fd + 1
        os.closerange(low, 65536)
        os.chdir("/")
        env = {os.fsencode(k): os.fsencode(v) for k, v in m["env"].items()}
        argv = [os.fsencode(a) for a in m["argv"]]
    except Exception as e:
        fail("the launcher could not set up the run: %s" % e)
    if m["rootMap"]:
        if v: root_map_in_view(["-c"] + m["argv"], env, v)
        root_map(["-c"] + m["argv"], env)
    if m.get("userStep"): user_step(["-c"] + m["argv"], env)
    exec_clean(argv, env)

# The idmapped view (root-map.helper.ts, steps 1 and 2) is the same for every run while the host's
# mount table and the range stay as they are, and making it was most of the step's cost: the user
# namespace U and a mount namespace M holding the placed clones are made once, by a builder child,
# and kept here as descriptors; each run's child joins M (setns, a chroot into the clone of "/")
# and goes on with step 3. /proc/self/mountinfo of the launcher's own namespace (the daemon's)
# tells of any change to that table (poll: POLLPRI): the view is dropped at once (the main loop
# watches it, so no file system stays held by it once the host unmounts it) and made again at the
# next run, which checks it before it forks. A view that cannot be built is not an error here: the
# run's child takes the whole step itself, with its errors as before; and it is not tried again
# until the table changes (or another range is asked for), so a file system that does not answer
# (a dead network share: a walk to its mounts waits for good) costs one builder, not one per run.
# The launcher waits for its builder BUILD_S at most: it must go on answering the daemon (a silent
# launcher is lost, with every run it started), so only the runs that walk that mount hang, as before.
# Every wait on a descriptor here is poll, not select: the view's may be numbered above 1023.
BUILD_S = 3

def changed(watch):
    p = select.poll(); p.register(watch, select.POLLPRI)
    return bool(p.poll(0))

class View:
    def __init__(self, base, count, watch, userns, mnt, root, places, mapped, why):
        self.base, self.count, self.watch, self.userns, self.mnt, self.root = base, count, watch, userns, mnt, root
        self.places, self.mapped, self.why = places, mapped, why
    def fds(self): return (self.watch, self.userns, self.mnt, self.root)
    def moved(self):
        up = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in self.fds()]
        return View(self.base, self.count, *up, self.places, self.mapped, self.why)
    def stale(self): return changed(self.watch)

view = None
failed = None   # (base, count, watch) of the last build that failed: not tried again before the watch says so

def drop_view():
    global view
    if view is not None:
        for fd in view.fds(): os.close(fd)
        view = None

def read_report(fd):
    # all the builder sends, or None when it has not ended its report within BUILD_S
    p = select.poll(); p.register(fd, select.POLLIN)
    out, end = b"", time.monotonic() + BUILD_S
    while True:
        left = end - time.monotonic()
        if left <= 0 or not p.poll(left * 1000): return None
        chunk = os.read(fd, 1 << 16)
        if not chunk: return out
        out += chunk

# watch: the launcher's mountinfo, opened before the build (a change made meanwhile is seen at the next run)
def build_view(base, count, watch):
    got = []
    try:
        userns = make_userns(base, count); got.append(userns)
        pipes = []
        try:
            pipes += os.pipe(); pipes += os.pipe()
            pid = os.fork()
        except OSError:
            for fd in pipes: os.close(fd)   # a launcher that lives on keeps no descriptor of a failed build
            raise
        r, w, r2, w2 = pipes
        if pid == 0:
            try:
                libc.prctl(PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)
                _signal.set_wakeup_fd(-1)
                os.close(r); os.close(w2)
                try:
                    clones, mapped, why = clone_view(userns)
                    places = [at for at, _ in clones]
                    place_view(clones)
                    out = b"".join(b"%s\0%s\0%s\0" % (b"1" if at in mapped else b"0", at, os.fsencode(why.get(at, ""))) for at in places)
                except MapError as e:
                    out = b"!" + os.fsencode(str(e))
                view_out = memoryview(out)
                while view_out: view_out = view_out[os.write(w, view_out):]
                os.close(w)
                os.read(r2, 1)   # held in M until the launcher has its descriptors
            finally:
                os._exit(0)
        os.close(w); os.close(r2)
        data = None
        try:
            data = read_report(r)
            if data is None: raise MapError("the view's builder did not end within %d s" % BUILD_S)
            if not data or data.startswith(b"!"): raise MapError(os.fsdecode(data[1:]) or "the view's builder ended early")
            got.append(os.open("/proc/%d/ns/mnt" % pid, os.O_RDONLY | os.O_CLOEXEC))
            got.append(os.open("/proc/%d/root" % pid, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC))
        finally:
            os.close(r); os.close(w2)
            # a builder that did not end its report is killed and left to the loop's reap: it may wait
            # on a file system that does not answer until that one is gone
            if data is None: os.kill(pid, _signal.SIGKILL)
            else: os.waitpid(pid, 0)
        fields = data.split(b"\0")[:-1]
        if len(fields) % 3: raise MapError("the view's builder sent a report that is not whole")
        places, mapped, why = [], set(), {}
        for i in range(0, len(fields), 3):
            flag, at, reason = fields[i:i + 3]
            places.append(at)
            if flag == b"1": mapped.add(at)
            else: why[at] = os.fsdecode(reason)
        return View(base, count, watch, userns, got[1], got[2], places, mapped, why)
    except BaseException:
        for fd in got: os.close(fd)
        raise

def view_for(argv):
    # the run's <base> <count> (its argv as the one-shot step gets it, less "-c"); None: the run's child takes the whole step
    global view, failed
    try: base, count = int(argv[0]), int(argv[1])
    except (IndexError, ValueError): return None
    if view is not None and (view.base != base or view.count != count or view.stale()): drop_view()
    if failed is not None and (failed[:2] != (base, count) or changed(failed[2])):
        os.close(failed[2]); failed = None
    if view is None and failed is None:
        try: watch = os.open("/proc/self/mountinfo", os.O_RDONLY | os.O_CLOEXEC)
        except OSError: return None   # no watch, no view: the run's child takes the whole step
        try: view = build_view(base, count, watch)
        except (MapError, OSError): failed = (base, count, watch)
        except BaseException:
            os.close(watch); raise
    return view

CLONE_NEWNET = 0x40000000
nftables = {}   # library path -> libnftables, loaded at its first filter and kept for the next

def nft_library(path):
    lib = nftables.get(path)
    if lib is None:
        lib = ctypes.CDLL(path, use_errno=True)
        lib.nft_ctx_new.restype = ctypes.c_void_p   # a pointer: the default int would cut it
        lib.nft_ctx_new.argtypes = [ctypes.c_uint32]
        lib.nft_run_cmd_from_buffer.restype = ctypes.c_int
        lib.nft_run_cmd_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        nftables[path] = lib
    return lib

def ns_id(st): return (st.st_dev, st.st_ino)

def filter_child(m, d, lib):
    libc.prctl(PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)
    if os.getppid() != launcher: os._exit(125)
    _signal.set_wakeup_fd(-1)
    w = lambda n: os.open(os.path.join(d, n), os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    os.dup2(w(b"err"), 2)
    os.set_blocking(2, True)
    def refuse(msg):
        os.write(2, (msg + "\n").encode()); os._exit(125)
    try:
        for n, fd in ((b"out", 1), (b"info", 4)): os.dup2(w(n), fd)
        ns = os.open("/proc/%d/ns/net" % int(m["pid"]), os.O_RDONLY | os.O_CLOEXEC)
        target, own = ns_id(os.fstat(ns)), ns_id(os.stat("/proc/self/ns/net"))
        rules = m["rules"].encode()
    except Exception as e:
        refuse("the sandbox's network namespace could not be opened: %s" % e)
    # the rules go into the sandbox's namespace or nowhere: never the host's
    if target == own: refuse("the sandbox shares the launcher's network namespace: no filter is put there")
    if libc.setns(ns, CLONE_NEWNET) != 0: refuse(err("setns(CLONE_NEWNET)"))
    if ns_id(os.stat("/proc/self/ns/net")) != target: refuse("setns did not move into the sandbox's network namespace")
    # made only now: the context's netlink socket belongs to the namespace it is opened in
    ctx = lib.nft_ctx_new(0)
    if not ctx: refuse("nft_ctx_new failed")
    # one transaction: 0 only with every rule in place; nft writes its own message to fd 2
    os._exit(0 if lib.nft_run_cmd_from_buffer(ctx, rules) == 0 else 1)

def start(m):
    d, rin, rsync = prepared[m["id"]]
    # the library before the fork, once per launcher: a child only pays its own transaction
    lib = nft_library(m["library"]) if m["op"] == "nft" else None
    v = view_for(m["argv"]) if m["op"] == "start" and m["rootMap"] else None
    pid = os.fork()
    if pid == 0:
        try:
            if lib is not None: filter_child(m, d, lib)
            else: child(m, d, rin, rsync, v)
        except BaseException as e:
            # said, so the daemon reads a failed start (launch-state.ts), never an exit of 125 as the command's
            try: os.write(2, ("aalis-rootmap: the launcher's run child failed: %s: %s\n" % (type(e).__name__, e)).encode())
            except OSError: pass
        finally: os._exit(125)
    drop(m)
    children[pid] = m["id"]; by_id[m["id"]] = pid
    send({"id": m["id"], "pid": pid})

def drop(m):
    got = prepared.pop(m["id"], None)
    if got: os.close(got[1]); os.close(got[2])

def reap():
    while True:
        try: pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError: return
        if pid == 0: return
        rid = children.pop(pid, None)
        if rid is None: continue
        del by_id[rid]
        if os.WIFSIGNALED(status): send({"id": rid, "signal": os.WTERMSIG(status)})
        else: send({"id": rid, "exit": os.WEXITSTATUS(status)})

def handle(m):
    op, rid = m.get("op"), m.get("id")
    try:
        if op == "prepare": prepare(m); send({"id": rid, "prepared": True})
        elif op == "start" or op == "nft": start(m)
        elif op == "kill":
            pid = by_id.get(rid)
            if pid is not None: os.kill(pid, _signal.SIGKILL)
        elif op == "drop": drop(m)
        elif op == "view": view_for(m["argv"])   # made ahead of the runs (no answer: a run that finds none makes it)
        else: send({"id": rid, "error": "unknown op %r" % op})
    except Exception as e:
        drop(m)
        send({"id": rid, "error": "%s: %s" % (op, e)})

send({"ready": os.getpid()})
buf = b""
while True:
    p = select.poll()
    for fd in (0, wake_r): p.register(fd, select.POLLIN)
    if view: p.register(view.watch, select.POLLPRI)
    events = dict(p.poll())
    # a closed channel is POLLHUP, not POLLIN: it is read too (its end of file ends the launcher)
    ready = [fd for fd in (0, wake_r) if events.get(fd, 0)]
    if view and events.get(view.watch, 0): drop_view()
    if wake_r in ready:
        try:
            while os.read(wake_r, 512): pass
        except BlockingIOError: pass
    reap()
    if 0 in ready:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            # the daemon closed the channel: its runs go with the launcher
            for pid in list(children): os.kill(pid, _signal.SIGKILL)
            os._exit(0)
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            if line.strip(): handle(json_loads(line))
`}`;
