/*
 * The step that keeps a root daemon's commands off the host's uid 0 (root-map.ts), as Python
 * source: Node has no binding for open_tree / mount_setattr / move_mount / setns, and
 * util-linux 2.38's mount has no `X-mount.idmap`. Run by the host's root, between the overlay's
 * mount step and bwrap:
 *
 *   python3 -I -S -c ROOT_MAP_PY <base> <count> [+ro] <path that must be idmapped>... -- <mounts> <hides> -- bwrap ...
 *
 * where <mounts> are the overlay mount step's operands (overlay-mount.ts `mountOperands`: each
 * writable root's `lower upper work alias`, `--`, each socket bind's `src dst`, `--`), mounted here
 * by mount(2) in step 4 instead of by a shell and one mount(8) per entry after it, and <hides>
 * the hidden entries taken off bwrap's arguments (premount.ts): `f <empty file> <path>` or
 * `d - <path>` each:
 *
 * 1. a user namespace U mapping ids 0..count-1 to the host's base..base+count-1 (a forked child
 *    unshares it; the host's root writes its maps);
 * 2. a mount namespace of its own; every visible mount cloned (open_tree), each made idmapped
 *    through U where its file system allows (mount_setattr MOUNT_ATTR_IDMAP), and put back over
 *    its own place, "/" first (then a chroot into the clone, which the kernel does not count as
 *    chrooted: it is the top of the namespace's root), so host files keep their owners inside U;
 * 3. setns into U, ids set to U's 0 (the host's `base`), a mount namespace U owns;
 * 4. the overlays (overlayfs refuses to be idmapped itself, but takes idmapped layers, so each is
 *    mounted here, as U's root, over the idmapped host directory), the socket binds, the aliases
 *    taken down again, the hides (read-only, bwrap's recursive binds carry them), with `+ro` then
 *    every other mount made read-only (premount.ts `readOnlyByStep`: bwrap then binds / as it is),
 *    then exec of bwrap, which runs as root of U, as it ran as the host's root
 *    before, and nests its own namespace in U. A mount that fails exits 125 with a line starting
 *    `aalis-overlay: `, as the shell step does.
 * A mount that cannot be idmapped (proc, sysfs, devpts: bwrap makes its own or binds read-only)
 * is put back as it was, unless a path given before `--` (the writable roots, and "/") lies on it:
 * then nothing runs. Every failure exits 125 with a line starting `aalis-rootmap: ` naming the call
 * and its errno.
 */
import { OVERLAY_FAILURE, OVERLAY_OPTIONS } from './overlay-mount.js';

/** What a failure of the `+ro` step says after `aalis-rootmap: ` (the daemon tells it from the mapping's own: launch-state.ts). */
export const READ_ONLY_FAILURE = 'cannot make the host read-only: ';

/** The step as a library: `root_map(argv, given)`, shared by the one-shot {@link ROOT_MAP_PY} and the launcher's child (launcher.helper.ts). */
export const ROOT_MAP_LIB_PY = String.raw`
import _signal, ctypes, os, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
# the new mount API's numbers are the same on every architecture (424 and up)
SYS_open_tree, SYS_move_mount, SYS_mount_setattr = 428, 429, 442
CLONE_NEWNS, CLONE_NEWUSER = 0x20000, 0x10000000
OPEN_TREE_CLONE, OPEN_TREE_CLOEXEC, AT_EMPTY_PATH, AT_FDCWD = 1, 0o2000000, 0x1000, -100
MOVE_MOUNT_F_EMPTY_PATH, MOUNT_ATTR_IDMAP = 4, 0x100000
MS_REC, MS_PRIVATE = 0x4000, 1 << 18

def fail(msg):
    sys.stderr.write("aalis-rootmap: " + msg + "\n"); sys.stderr.flush(); os._exit(125)

def err(call):
    e = ctypes.get_errno()
    return "%s failed: %s (errno %d)" % (call, os.strerror(e), e)

# a step that cannot be taken: the one-shot step and a run's child exit with it (fail), the
# launcher, which builds views for its runs, falls back to the whole step in the run's child
class MapError(Exception): pass

def parse_args(argv):
    # every path operand is absolute (a hide's kind is "f" or "d", the read-only mark "+ro"), so the first four "--" are the separators (bwrap's own "--" comes later)
    try:
        base, count = int(argv[1]), int(argv[2])
        read_only = argv[3] == "+ro"
        first = 4 if read_only else 3
        sep = argv.index("--", first)
        sep2 = argv.index("--", sep + 1)
        sep3 = argv.index("--", sep2 + 1)
        sep4 = argv.index("--", sep3 + 1)
    except (IndexError, ValueError):
        fail("usage: <base> <count> [+ro] <path>... -- <lower upper work alias>... -- <src dst>... -- <kind src dst>... -- <command>")
    need = [os.fsencode(p) for p in argv[first:sep]]
    quads = [os.fsencode(p) for p in argv[sep + 1:sep2]]
    pairs = [os.fsencode(p) for p in argv[sep2 + 1:sep3]]
    hides = [os.fsencode(p) for p in argv[sep3 + 1:sep4]]
    if len(quads) % 4 or len(pairs) % 2 or len(hides) % 3: fail("the overlay operands are not whole")
    if any(hides[i] not in (b"f", b"d") for i in range(0, len(hides), 3)): fail("a hide is neither a file nor a directory")
    cmd = argv[sep4 + 1:]
    if not cmd: fail("no command")
    return base, count, need, quads, pairs, hides, cmd, read_only

# 1. the user namespace U: a forked child unshares it, this process (the host's root) writes its maps
def make_userns(base, count):
    pipes = []
    try:
        pipes += os.pipe(); pipes += os.pipe()
        pid = os.fork()
    except OSError as e:
        # the launcher (launcher.helper.ts) lives on after a failed step: it keeps none of these
        for fd in pipes: os.close(fd)
        raise MapError("the user namespace's child could not be made: %s" % e)
    r, w, r2, w2 = pipes
    if pid == 0:
        os.close(r); os.close(w2)
        os.write(w, b"1" if libc.unshare(CLONE_NEWUSER) == 0 else b"0")
        os.read(r2, 1); os._exit(0)
    os.close(w); os.close(r2)
    try:
        if os.read(r, 1) != b"1": raise MapError("unshare(CLONE_NEWUSER) in a child failed: no user namespace")
        try:
            for f in ("uid_map", "gid_map"):
                with open("/proc/%d/%s" % (pid, f), "w") as h: h.write("0 %d %d\n" % (base, count))
            return os.open("/proc/%d/ns/user" % pid, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            raise MapError("writing the user namespace's id map failed: %s" % e)
    finally:
        os.close(r); os.close(w2); os.waitpid(pid, 0)

def unescape(s):
    out, j = bytearray(), 0
    while j < len(s):
        if s[j:j + 1] == b"\\" and s[j + 1:j + 4].isdigit(): out.append(int(s[j + 1:j + 4], 8)); j += 4
        else: out += s[j:j + 1]; j += 1
    return bytes(out)

class MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]

# 2. the idmapped view, in this process: a mount namespace of its own, every visible mount cloned
# (open_tree), each made idmapped through U where its file system allows; returns the clones (not
# yet in place, see place_view), the places idmapped, and why each other one is not
def clone_view(userns):
    if libc.unshare(CLONE_NEWNS) != 0: raise MapError(err("unshare(CLONE_NEWNS)"))
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0: raise MapError(err("mount(/, MS_REC|MS_PRIVATE)"))
    attr = MountAttr(MOUNT_ATTR_IDMAP, 0, 0, userns)

    def clone_all():
        # every visible mount, parents first, cloned; None when one went away meanwhile (another program unmounted it)
        mounts, kids = {}, {}
        with open("/proc/self/mountinfo", "rb") as h:
            for line in h.read().split(b"\n"):
                f = line.split(b" ")
                if len(f) > 5: mounts[int(f[0])] = (int(f[1]), unescape(f[4]))
        for m, (parent, _) in mounts.items(): kids.setdefault(parent, []).append(m)
        def top(m):
            # the mount seen at m's place: the last one stacked on it
            while True:
                over = [k for k in kids.get(m, []) if mounts[k][1] == mounts[m][1]]
                if not over: return m
                m = max(over)
        roots = [m for m, (parent, _) in mounts.items() if parent not in mounts]
        if len(roots) != 1: raise MapError("the mount table has %d roots, not one" % len(roots))
        order = []
        def walk(m):
            m = top(m); order.append(m)
            places = {}
            for k in kids.get(m, []):
                at = mounts[k][1]
                if at != mounts[m][1]: places[at] = min(places.get(at, k), k)
            for at in sorted(places): walk(places[at])
        walk(roots[0])
        clones, mapped, why = [], set(), {}
        for m in order:
            at = mounts[m][1]
            fd = libc.syscall(SYS_open_tree, AT_FDCWD, at, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)
            if fd < 0:
                e = err("open_tree(%s, OPEN_TREE_CLONE)" % os.fsdecode(at))
                for _, c in clones: os.close(c)   # a detached clone goes with its last descriptor
                return None, e
            if libc.syscall(SYS_mount_setattr, fd, b"", AT_EMPTY_PATH, ctypes.byref(attr), ctypes.sizeof(attr)) == 0: mapped.add(at)
            else: why[at] = err("mount_setattr(%s, MOUNT_ATTR_IDMAP)" % os.fsdecode(at))
            clones.append((at, fd))
        return (clones, mapped, why), None

    for attempt in range(3):
        got, e = clone_all()
        if got: return got
    raise MapError("the mount table kept changing while it was cloned: " + e)

# a mount that cannot be idmapped (proc, sysfs, devpts: bwrap makes its own or binds read-only) is
# put back as it was, unless one of need (the writable roots, and "/") lies on it: then nothing runs
def check_need(places, mapped, why, need):
    def holder(p):
        best = None
        for at in places:
            if (p == at or p.startswith(at.rstrip(b"/") + b"/")) and (best is None or len(at) >= len(best)): best = at
        return best
    for p in [b"/"] + need:
        h = holder(p)
        if h not in mapped:
            raise MapError("the file system of %s cannot be idmapped, so the command would not see its owners: %s" % (os.fsdecode(p), why.get(h, "no mount holds it")))

# each clone put back over its own place, "/" first (then a chroot into the clone, which the kernel
# does not count as chrooted: it is the top of the namespace's root), so host files keep their owners inside U
def place_view(clones):
    cwd = os.getcwd()
    for at, fd in clones:
        if libc.syscall(SYS_move_mount, fd, b"", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) != 0: raise MapError(err("move_mount(%s)" % os.fsdecode(at)))
        if at == b"/":
            os.fchdir(fd); os.chroot(".")
        os.close(fd)
    os.chdir(cwd)

MS_BIND, MS_NOSUID, MS_NODEV = 4096, 2, 4
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV, AT_RECURSIVE = 1, 2, 4, 0x8000

SYS_fsopen, SYS_fsconfig, SYS_fsmount = 430, 431, 432
FSCONFIG_SET_FLAG, FSCONFIG_SET_STRING, FSCONFIG_CMD_CREATE, FSMOUNT_CLOEXEC = 0, 1, 6, 1

# its failures start with RO_FAILURE, which the daemon tells from the mapping's own (launch-state.ts)
RO_FAILURE = "${READ_ONLY_FAILURE}"

# With +ro (premount.ts readOnlyByStep), once the overlays, socket binds and hides are mounted: every
# mount of this namespace made read-only, nosuid and nodev at once (one recursive mount_setattr on
# "/"), as bwrap's --ro-bind / / made each of its copies one by one; bwrap then binds / as it is.
# Made writable again: each overlay, by the descriptor its mount was made with (overlay_mount), never
# by its path, which a host program could have moved meanwhile to name the mount around it; and the
# mounts of /dev and /proc, each made its own mount here where it is not one (recursively, so what
# is under it comes along): bwrap makes a /dev and a /proc of its own over them, from them (the
# device nodes it binds keep the flags of /dev's mount, and it writes its child's id maps through
# /proc); what is under them is covered in the sandbox, and read-only here as the rest (/dev and
# /proc are the host root's: no other program moves them). places: the mount points of this
# namespace (the view's); overlays: each overlay's mount descriptor and where it was mounted. Any
# failure: nothing runs, and its line starts with RO_FAILURE (launch-state.ts tells it from the mapping's).
def read_only_tree(places, overlays):
    for at in (b"/dev", b"/proc"):
        if at not in places and libc.mount(at, at, None, MS_BIND | MS_REC, None) != 0: fail(RO_FAILURE + err("mount(%s, MS_BIND|MS_REC)" % os.fsdecode(at)))
    attr = MountAttr(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, 0, 0)
    if libc.syscall(SYS_mount_setattr, AT_FDCWD, b"/", AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)) != 0: fail(RO_FAILURE + err("mount_setattr(/, read-only, recursive)"))
    for at, clear in ((b"/dev", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV), (b"/proc", MOUNT_ATTR_RDONLY)):
        attr = MountAttr(0, clear, 0, 0)
        if libc.syscall(SYS_mount_setattr, AT_FDCWD, at, 0, ctypes.byref(attr), ctypes.sizeof(attr)) != 0: fail(RO_FAILURE + err("mount_setattr(%s, writable)" % os.fsdecode(at)))
    attr = MountAttr(0, MOUNT_ATTR_RDONLY, 0, 0)
    for fd, at in overlays:
        if libc.syscall(SYS_mount_setattr, fd, b"", AT_EMPTY_PATH, ctypes.byref(attr), ctypes.sizeof(attr)) != 0: fail(RO_FAILURE + err("mount_setattr(the overlay on %s, writable)" % os.fsdecode(at)))
        os.close(fd)

# an overlay mounted by the new mount API (fsopen, fsconfig, fsmount, move_mount), nosuid and nodev:
# what mount(2) makes, but its descriptor kept (read_only_tree makes it writable again by it)
def overlay_mount(lower, upper, work):
    fs = libc.syscall(SYS_fsopen, b"overlay", 1)   # FSOPEN_CLOEXEC
    if fs < 0: ofail("cannot mount an overlay on %s: %s" % (os.fsdecode(lower), err("fsopen")))
    try:
        params = [(b"lowerdir", lower), (b"upperdir", upper), (b"workdir", work)] + [tuple(o.split(b"=", 1)) if b"=" in o else (o, None) for o in b"${OVERLAY_OPTIONS}".split(b",")]
        for key, value in params:
            if libc.syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING if value is not None else FSCONFIG_SET_FLAG, key, value, 0) != 0: ofail("cannot mount an overlay on %s: %s" % (os.fsdecode(lower), err("fsconfig(%s)" % key.decode())))
        if libc.syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, None, None, 0) != 0: ofail("cannot mount an overlay on %s: %s" % (os.fsdecode(lower), err("fsconfig(create)")))
        mnt = libc.syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
        if mnt < 0: ofail("cannot mount an overlay on %s: %s" % (os.fsdecode(lower), err("fsmount")))
    finally:
        os.close(fs)
    if libc.syscall(SYS_move_mount, mnt, b"", AT_FDCWD, lower, MOVE_MOUNT_F_EMPTY_PATH) != 0: ofail("cannot mount an overlay on %s: %s" % (os.fsdecode(lower), err("move_mount")))
    return mnt

# a failure of the overlays' mounts: exit 125 with a line the daemon reads as the shell step's (launch-state.ts)
def ofail(msg):
    sys.stderr.write("${OVERLAY_FAILURE}" + msg + "\n"); sys.stderr.flush(); os._exit(125)

# the overlays and socket binds, in the order of the shell step (overlay-mount.ts), as the root of
# the user namespace that owns this mount namespace (U here; an ordinary user's own in user_step)
# keep: each overlay's mount descriptor and its path, returned (read_only_tree); otherwise none are kept
def mount_overlays(quads, pairs, keep=False):
    aliases, kept = [], []
    for i in range(0, len(quads), 4):
        lower, upper, work, alias = quads[i:i + 4]
        if alias != b"-":
            if libc.mount(lower, alias, None, MS_BIND, None) != 0: ofail("cannot keep the host directory %s reachable: %s" % (os.fsdecode(lower), err("mount")))
            aliases.append(alias)
        if keep:
            kept.append((overlay_mount(lower, upper, work), lower))
            continue
        opts = b"lowerdir=" + lower + b",upperdir=" + upper + b",workdir=" + work + b",${OVERLAY_OPTIONS}"
        # nosuid and nodev, as bwrap gives every bind (its binds of / and of the roots find nothing to remount)
        if libc.mount(b"overlay", lower, b"overlay", MS_NOSUID | MS_NODEV, opts) != 0: ofail("cannot mount an overlay on %s: %s" % (os.fsdecode(lower), err("mount")))
    for i in range(0, len(pairs), 2):
        if libc.mount(pairs[i], pairs[i + 1], None, MS_BIND, None) != 0: ofail("cannot bind the socket %s: %s" % (os.fsdecode(pairs[i + 1]), err("mount")))
    for a in aliases:
        if libc.umount2(a, 0) != 0: ofail("cannot take down %s: %s" % (os.fsdecode(a), err("umount2")))
    return kept

# An ordinary user's overlay step: what the shell step does with unshare(1) --map-root-user
# --mount, a shell and one mount(8) per entry (overlay-mount.ts), in this process: a user namespace
# mapping its 0 to this user alone and a mount namespace it owns (mounts private, as unshare(1)
# makes them), the overlays and socket binds by mount(2), then exec of bwrap. A kept-alive
# launcher's child runs it (launcher.helper.ts): no interpreter's start, no mount(8) per root.
# argv: <lower upper work alias>... -- <src dst>... -- <command>, after argv[0]
# Every failure here is the overlay step's (exit 125, a line starting "${OVERLAY_FAILURE}"), as
# the shell step's: the daemon reads it as "the writable roots could not be mounted", nothing ran.
def user_step(argv, given):
    try:
        sep = argv.index("--", 1)
        sep2 = argv.index("--", sep + 1)
    except ValueError:
        ofail("usage: <lower upper work alias>... -- <src dst>... -- <command>")
    quads = [os.fsencode(p) for p in argv[1:sep]]
    pairs = [os.fsencode(p) for p in argv[sep + 1:sep2]]
    cmd = argv[sep2 + 1:]
    if len(quads) % 4 or len(pairs) % 2: ofail("the overlay operands are not whole")
    if not cmd: ofail("no command")
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0: ofail(err("unshare(CLONE_NEWUSER|CLONE_NEWNS)"))
    try:
        for f, data in (("setgroups", "deny"), ("uid_map", "0 %d 1\n" % uid), ("gid_map", "0 %d 1\n" % gid)):
            with open("/proc/self/" + f, "w") as h: h.write(data)
    except OSError as e:
        ofail("writing the user namespace's id map failed: %s" % e)
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0: ofail(err("mount(MS_REC|MS_PRIVATE) of /"))
    mount_overlays(quads, pairs)
    exec_clean(cmd, given, ofail)

# 3. into U as its root; 4. the overlays and socket binds in a mount namespace U owns; exec
def enter_and_exec(userns, quads, pairs, hides, cmd, given, read_only=False, places=()):
    if libc.setns(userns, CLONE_NEWUSER) != 0: fail(err("setns(CLONE_NEWUSER)"))
    os.close(userns)
    try:
        os.setgroups([]); os.setresgid(0, 0, 0); os.setresuid(0, 0, 0)
    except OSError as e:
        fail("taking the user namespace's ids failed: %s" % e)
    # a mount namespace U owns, in which the overlay's step may mount (overlayfs takes idmapped layers; it cannot itself be idmapped)
    if libc.unshare(CLONE_NEWNS) != 0: fail(err("unshare(CLONE_NEWNS) in the user namespace"))
    overlays = mount_overlays(quads, pairs, read_only)
    # the hidden entries bwrap would otherwise mount, each of its mounts costing it a read of the
    # whole mount table (premount.ts): a file covered by the empty file, a directory by a tmpfs,
    # both read-only; files first, whose source may lie in a directory hidden after them
    # A hide is never mounted through a symlink (mount(2) follows one, so the hide would land on its
    # target, e.g. the bwrap binary exec'd next, and not at the entry): premount.ts leaves a symlink
    # with bwrap, so one here was swapped in since the scan. The empty file's bind keeps the flags
    # of the mount it comes from that this namespace cannot clear (noexec, nosymfollow: locked, as
    # the step's user namespace is not the host's), or the remount fails with EPERM, as bwrap keeps them.
    MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_NOSYMFOLLOW = 1, 2, 4, 8, 32, 256
    ST_NOEXEC, ST_NOSYMFOLLOW = 8, 0x2000
    for i in range(0, len(hides), 3):
        kind, src, dst = hides[i:i + 3]
        what = "file" if kind == b"f" else "directory"
        try:
            if stat.S_ISLNK(os.lstat(dst).st_mode): fail("cannot hide the %s %s: it is a symlink now" % (what, os.fsdecode(dst)))
        except OSError as e:
            fail("cannot hide the %s %s: mount failed: %s (errno %d)" % (what, os.fsdecode(dst), os.strerror(e.errno), e.errno))
        if kind == b"f":
            if libc.mount(src, dst, None, MS_BIND, None) != 0:
                fail("cannot hide the file %s: %s" % (os.fsdecode(dst), err("mount")))
            try:
                f = os.statvfs(dst).f_flag
            except OSError:
                f = 0
            keep = (MS_NOEXEC if f & ST_NOEXEC else 0) | (MS_NOSYMFOLLOW if f & ST_NOSYMFOLLOW else 0)
            if libc.mount(None, dst, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | keep, None) != 0:
                fail("cannot hide the file %s: %s" % (os.fsdecode(dst), err("mount")))
        elif libc.mount(b"tmpfs", dst, b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, b"mode=0755") != 0:
            fail("cannot hide the directory %s: %s" % (os.fsdecode(dst), err("mount")))
    if read_only: read_only_tree(places, overlays)
    exec_clean(cmd, given)

# the whole step in this process (the one-shot step; a launcher's run without a view): argv is the
# step's own (argv[1] is <base>); given: the environment bwrap gets, as bytes
def root_map(argv, given):
    base, count, need, quads, pairs, hides, cmd, read_only = parse_args(argv)
    try:
        userns = make_userns(base, count)
        clones, mapped, why = clone_view(userns)
        places = [at for at, _ in clones]
        check_need(places, mapped, why, need)
        place_view(clones)
    except MapError as e:
        fail(str(e))
    enter_and_exec(userns, quads, pairs, hides, cmd, given, read_only, places)

# the step in a launcher's run child with the view the launcher keeps (launcher.helper.ts): steps 1
# and 2 were taken once, by its builder; this child joins the view's mount namespace and goes on
# from step 3. The view's descriptors are close-on-exec, and each is closed here once used.
def root_map_in_view(argv, given, v):
    base, count, need, quads, pairs, hides, cmd, read_only = parse_args(argv)
    if (base, count) != (v.base, v.count): fail("the launcher's view maps another range")
    try:
        check_need(v.places, v.mapped, v.why, need)
    except MapError as e:
        fail(str(e))
    cwd = os.getcwd()
    if libc.setns(v.mnt, CLONE_NEWNS) != 0: fail(err("setns(CLONE_NEWNS) into the idmapped view"))
    # setns put this process at the namespace's own root, under the clone of "/" stacked on it
    os.fchdir(v.root); os.chroot("."); os.chdir(cwd)
    for fd in (v.watch, v.mnt, v.root): os.close(fd)
    enter_and_exec(v.userns, quads, pairs, hides, cmd, given, read_only, v.places)

def exec_clean(argv, env, failed=None):
    # python ignores SIGPIPE and SIGXFSZ (and a launcher SIGINT), and an ignored signal stays ignored
    # across exec: the command gets every signal at its default, as a program node starts does
    for s in range(1, _signal.NSIG):
        try: _signal.signal(s, _signal.SIG_DFL)
        except (OSError, ValueError): pass
    try:
        os.execve(argv[0], argv, env)
    except OSError as e:
        (failed or fail)("exec %s failed: %s" % (os.fsdecode(argv[0]), e))
`;

/** An ordinary user's overlay step: `user_step` of {@link ROOT_MAP_LIB_PY} on its own argv and environment (`python3 -I -S -c USER_STEP_PY <mounts> bwrap ...`). */
export const USER_STEP_PY = `${ROOT_MAP_LIB_PY}
with open("/proc/self/environ", "rb") as h:
    given = dict(kv.split(b"=", 1) for kv in h.read().split(b"\\0") if b"=" in kv)
user_step(sys.argv, given)
`;

/** The one-shot step: {@link ROOT_MAP_LIB_PY} run on its own argv and environment (`python3 -I -S -c ROOT_MAP_PY ...`). */
export const ROOT_MAP_PY = `${ROOT_MAP_LIB_PY}
# the environment exactly as given (Python itself adds LC_CTYPE to os.environ under the C locale)
with open("/proc/self/environ", "rb") as h:
    given = dict(kv.split(b"=", 1) for kv in h.read().split(b"\\0") if b"=" in kv)
root_map(sys.argv, given)
`;
