// `aalis exec` through the exec helper (src/exec-server.ts): a process of this user's own, kept
// for a while after a run, that runs the next commands as this process would have run them (its
// directory, environment, umask, arguments, terminal questions and signals are sent along), with
// its sandbox service warm. This file is plain JavaScript and loads nothing of the bundle, so a run
// through the helper costs a node start and a connection. The wire is src/exec-wire.ts's.
//
// Who can use a helper. Its socket is `aalis-exec/<key>.sock` in $XDG_RUNTIME_DIR (when that is
// really under /run and this user's own, not writable by others), or in /run for root; anyone else
// gets no helper. The directory must be this user's own and unreadable to others, and the socket
// this user's. /run is hidden whole from every sandbox, but a workspace under /run is bound back
// into it, so the path is not the lock: a helper serves only a client that can show the token it
// was started with, which is in the helper's own environment, readable at /proc/<its pid>/environ
// by this user's processes that see it, and by nothing in a sandbox (each has a pid namespace and a
// /proc of its own). The key names this bundle (its code cache's digest, its place and the file's
// identity), this node, this user's ids and this process's namespaces and root, and the helper
// declines any client whose `who` is not the one it was started with, so a rebuilt or patched CLI,
// another install (whose control plane is another), another node, another group list or a client
// in another mount, pid or network namespace never uses it. AALIS_EXEC_HELPER=off: no helper,
// every run in-process. CommonJS, as bin/aalis.cjs is: an ES module entry costs node its ES loader's
// start, about a tenth of a run through the helper.
'use strict';
const { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, readSync, realpathSync, writeSync } = require('node:fs');
const { createConnection } = require('node:net');
const { isatty } = require('node:tty');

/**
 * `process.stdout` or `process.stderr`, noted as used: each is made on first use (a pipe's stream,
 * about a millisecond), so a run that printed nothing flushes neither at its end.
 */
function out(name) {
  if (!opened.has(name)) {
    opened.add(name);
    // a reader gone (EPIPE) ends that output quietly; another failure (a full disk) is said at the end (src/process-io.ts)
    process[name].on('error', (error) => noteLost(name, error));
  }
  return process[name];
}
const opened = new Set();
/** The streams that could not be written, and why. */
const lost = new Map();
/** Notes why `name` could not be written; a reader gone (EPIPE) is not noted. */
function noteLost(name, error) {
  if (error.code !== 'EPIPE' && !lost.has(name)) lost.set(name, `${error.code ?? 'error'}: ${String(error.message).replace(/^\w+: /, '')}`);
}
/** Whether stdout / stderr is a regular file, asked once. */
const regular = new Map();

/**
 * Writes `data` to stdout or stderr. To a regular file with write(2) until every byte is written:
 * node's own stream for a file ignores a short write, and a disk that filled up partway through
 * lost the rest with no error (as src/process-io.ts `writerOf`, found by a review).
 */
function emit(name, data) {
  // nothing to write is not written: /dev/full refuses even an empty write
  if (data.length === 0 || lost.has(name)) return;
  const fd = name === 'stdout' ? 1 : 2;
  if (!regular.has(name)) {
    let file = false;
    try {
      // bigint: a plain fstat of a pipe misleads node's next module resolution (src/process-io.ts)
      file = fstatSync(fd, { bigint: true }).isFile();
    } catch {}
    regular.set(name, file);
  }
  if (!regular.get(name)) {
    out(name).write(data);
    return;
  }
  const bytes = Buffer.from(data);
  try {
    for (let at = 0; at < bytes.length; ) {
      const wrote = writeSync(fd, bytes, at);
      if (wrote <= 0) throw Object.assign(new Error('the write took no byte'), { code: 'EIO' });
      at += wrote;
    }
  } catch (error) {
    noteLost(name, error);
  }
}

/** The argument that runs the bundle as the helper in place of `exec` (src/exec-server.ts EXEC_HELPER_MODE). */
const HELPER_MODE = '__exec-helper';
/** The variable a helper is started with its token in (src/exec-server.ts EXEC_HELPER_TOKEN). */
const TOKEN_VAR = 'AALIS_EXEC_HELPER_TOKEN';
/** How long a client waits for the helper to take its request before it runs the command itself. */
const ANSWER_MS = 10_000;

/**
 * `aalis exec …` (or the helper, `__exec-helper <socket>`) from the bundle at `bundle`; `self` is the
 * script this process runs (bin/aalis.cjs), which a helper is started with. Through the helper when
 * one answers; else in this process, and a helper is started as it exits, for the next run.
 */
async function execEntry(bundle, self) {
  if (process.argv[2] !== HELPER_MODE) {
    const socket = helperSocket(bundle);
    const through = socket === undefined ? { fallback: 'off' } : await viaHelper(bundle, socket, process.argv.slice(3));
    if ('status' in through) {
      // only what is still queued: an empty write to /dev/full fails, and said output was lost where none was written
      const flushed = () => Promise.all([...opened].filter((name) => process[name].writableLength > 0).map((name) => new Promise((resolve) => process[name].write('', resolve))));
      await flushed();
      const stdout = lost.get('stdout');
      if (stdout !== undefined && !lost.has('stderr')) {
        emit('stderr', `aalis: output could not be written to stdout (${stdout}); what was not written is lost${through.status === 0 ? ', so the exit status is 1' : ''}\n`);
        await flushed();
      }
      process.exit(stdout !== undefined && through.status === 0 ? 1 : through.status);
    }
    if (through.fallback === 'absent') process.on('exit', () => startHelper(self, socket, helperWho(bundle)));
  }
  const { runExec } = await import('./exec-loader.mjs');
  runExec(bundle);
}

/** The helper's socket path for the bundle at `bundle`, or undefined when this process gets no helper. */
function helperSocket(bundle, env = process.env) {
  if (env.AALIS_EXEC_HELPER === 'off' || process.platform !== 'linux') return undefined;
  const base = runtimeBase(env.XDG_RUNTIME_DIR);
  if (base === undefined) return undefined;
  const digest = Buffer.alloc(32);
  try {
    const fd = openSync(`${bundle}.cache`, 'r');
    try {
      if (readSync(fd, digest, 0, 32, 0) !== 32) return undefined;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined; // no code cache: a build without one runs in-process
  }
  // not a cryptographic hash (node:crypto's load would be a tenth of the run): the directory is this
  // user's alone, the name only keeps versions apart, and the helper checks `who` itself
  let who;
  try {
    who = helperWho(bundle);
  } catch {
    return undefined; // the bundle or /proc cannot be read: no helper
  }
  let h = 0x811c9dc5;
  for (const c of who) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return `${base.replace(/\/+$/, '')}/aalis-exec/${digest.toString('hex', 0, 10)}-${h.toString(16).padStart(8, '0')}.sock`;
}

/**
 * Where the helper's directory goes: the runtime directory when it is really under /run (its real
 * path: not through `..` or a symlink out of it) and this user's alone to change, else /run for
 * root, else nowhere.
 */
function runtimeBase(runtime) {
  if (runtime?.startsWith('/')) {
    try {
      const real = realpathSync.native(runtime);
      const st = lstatSync(real);
      // this user's, and no one else may rename what is in it (a root whose XDG_RUNTIME_DIR is still
      // another user's, after `sudo -E`, must not connect where that user can swap the directory);
      // nor what it is in, up to /run (root's or this user's, writable by no one else)
      const ancestorsSafe = () => {
        for (let dir = real.slice(0, real.lastIndexOf('/')); dir !== '/run' && dir.length > '/run'.length; dir = dir.slice(0, dir.lastIndexOf('/'))) {
          const a = lstatSync(dir);
          if ((a.uid !== 0 && a.uid !== process.geteuid()) || (a.mode & 0o022) !== 0) return false;
        }
        return true;
      };
      if (real.startsWith('/run/') && st.isDirectory() && st.uid === process.geteuid() && (st.mode & 0o022) === 0 && ancestorsSafe()) return real;
    } catch {
      // missing: as if unset
    }
  }
  return process.geteuid() === 0 ? '/run' : undefined;
}

/**
 * What a helper must share with its client: the bundle (its place: another install of the same
 * version protects other files as its control plane; and the file itself, rewritten or patched),
 * the node that runs it, the user's ids, and the namespaces and root the client sees the host
 * through (a client confined in a mount namespace of its own must not get the helper's view).
 */
function helperWho(bundle) {
  let who = whoOf.get(bundle);
  if (who === undefined) {
    who = whoNow(bundle);
    whoOf.set(bundle, who);
  }
  return who;
}

/** {@link helperWho}, once per bundle a process: the socket's key, the request and a helper started at exit all need it. */
const whoOf = new Map();

function whoNow(bundle) {
  const st = lstatSync(bundle, { bigint: true });
  const ns = ['mnt', 'pid', 'net', 'user', 'ipc', 'uts', 'cgroup'].map((n) => {
    try {
      return readlinkSync(`/proc/self/ns/${n}`);
    } catch {
      return `${n}:?`;
    }
  });
  return JSON.stringify([bundle, `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}`, process.version, process.execPath, process.geteuid(), process.getegid(), ...process.getgroups().sort((a, b) => a - b), readlinkSync('/proc/self/root'), ...ns]);
}

/** The token the helper at `socket` was started with, from its environment (its pid is in `<key>.pid`); undefined when it cannot be read. */
function helperToken(socket) {
  try {
    const pid = Number(readFileSync(`${socket.slice(0, -'.sock'.length)}.pid`, 'latin1'));
    if (!Number.isSafeInteger(pid) || pid <= 1) return undefined;
    const environ = `\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}`;
    const at = environ.indexOf(`\0${TOKEN_VAR}=`);
    if (at === -1) return undefined;
    const from = at + TOKEN_VAR.length + 2;
    const end = environ.indexOf('\0', from);
    return environ.slice(from, end === -1 ? environ.length : end);
  } catch {
    return undefined;
  }
}

/** This process's umask, read without setting it (process.umask() without an argument is deprecated for that). */
function ownUmask() {
  const line = /^Umask:\s*([0-7]+)$/m.exec(readFileSync('/proc/self/status', 'latin1'));
  return line ? Number.parseInt(line[1], 8) : process.umask();
}

/** Whether `dir` is this user's own directory that no one else may enter or write. */
function ownPrivateDir(dir) {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  return st?.isDirectory() === true && st.uid === process.geteuid() && (st.mode & 0o077) === 0;
}

/**
 * Runs `aalis exec <argv>` through the helper at `socket`. Resolves `{ status }` when the helper
 * ran it (its output already written here), or `{ fallback }` when it did not and the command is
 * this process's to run: `absent` (no helper answers: start one after), `declined` (busy, or
 * another version), `unsafe` (the socket or its directory is not this user's alone), `lossy` (an
 * input Node decoded with U+FFFD: exec's check of it reads this process's /proc/self).
 */
function viaHelper(bundle, socket, argv) {
  let cwd;
  try {
    cwd = process.cwd();
  } catch {
    return Promise.resolve({ fallback: 'lossy' }); // past PATH_MAX, or removed: exec says so itself
  }
  // Node read an argument, variable or directory whose bytes are not UTF-8 as U+FFFD: exec refuses
  // such a path by what /proc/self says, which the helper's would not; this process runs it
  if ([...argv, cwd, ...Object.values(process.env)].some((v) => v?.includes('\uFFFD'))) return Promise.resolve({ fallback: 'lossy' });
  const dir = socket.slice(0, socket.lastIndexOf('/'));
  const st = lstatSync(socket, { throwIfNoEntry: false });
  if (st === undefined) return Promise.resolve({ fallback: 'absent' });
  if (!ownPrivateDir(dir) || !st.isSocket() || st.uid !== process.geteuid()) return Promise.resolve({ fallback: 'unsafe' });
  const token = helperToken(socket);
  if (token === undefined) return Promise.resolve({ fallback: 'absent' }); // its helper is gone (or not one of this version)
  // standard input is the command's only with --stdin (an exec option: before the command's `--`)
  const dash = argv.indexOf('--');
  const stdinAsked = (dash === -1 ? argv : argv.slice(0, dash)).includes('--stdin');
  return new Promise((resolve) => {
    let accepted = false;
    let finished = false;
    let deadline;
    let rl;
    const finish = (result) => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      rl?.close();
      resolve(result);
    };
    let signalled;
    const onSignal = (signal) => {
      if (signalled !== undefined || !accepted) {
        // a second signal (or one before the helper took the command: nothing runs yet) ends this client at once
        if (signalled !== undefined) out('stderr').write(`aalis: ${signal} received again; exiting without waiting for the sandbox to be removed\n`);
        conn.destroy();
        finish({ status: 128 + (signal === 'SIGINT' ? 2 : 15) });
        return;
      }
      signalled = signal;
      send({ t: 'signal', signal });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const conn = createConnection(socket);
    const send = (frame) => conn.writable && conn.write(`${JSON.stringify(frame)}\n`);
    // A helper that does not take the request in time (stopped, or stuck) is left: the command runs
    // here. It cannot run there too: the helper starts it only on this client's `go`, sent only
    // once `accepted` came in time.
    deadline = setTimeout(() => {
      if (accepted) return;
      out('stderr').write(`aalis: the exec helper at ${socket} did not answer within ${ANSWER_MS / 1000} s; the command runs in this process\n`);
      conn.destroy();
      finish({ fallback: 'declined' });
    }, ANSWER_MS);
    conn.on('connect', () => {
      // isatty, not process.stdin.isTTY: reading that makes stdin's stream (a file's or a pipe's),
      // 2 to 8 ms here, which a command without --stdin never needs; the answer is the same
      const interactive = isatty(0) && isatty(2);
      send({ token }); // alone on the first line (src/exec-wire.ts TokenLineSchema)
      send({ v: 1, who: helperWho(bundle), argv, cwd, env: { ...process.env }, umask: ownUmask(), interactive });
    });
    conn.on('error', (error) => {
      if (!accepted) finish({ fallback: error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? 'absent' : 'declined' });
    });
    conn.on('close', () => {
      if (finished) return; // the exit frame (or a signal, or the deadline) decided already
      if (!accepted) finish({ fallback: 'absent' });
      else {
        out('stderr').write(`aalis: the exec helper ended before it said how the command ended; it may have run. Set AALIS_EXEC_HELPER=off to run commands in this process.\n`);
        finish({ status: 1 });
      }
    });
    let parts = [];
    conn.on('data', (chunk) => {
      let from = 0;
      for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
        parts.push(chunk.subarray(from, nl));
        const line = Buffer.concat(parts).toString('utf8');
        parts = [];
        from = nl + 1;
        let frame;
        try {
          frame = JSON.parse(line);
        } catch {
          conn.destroy(); // not a helper of this version: its close says so
          return;
        }
        onFrame(frame);
      }
      if (from < chunk.length) parts.push(chunk.subarray(from));
    });
    const onFrame = (frame) => {
      switch (frame.t) {
        case 'accepted':
          if (finished) break; // too late: this process runs it (the helper gets no `go`)
          accepted = true;
          send({ t: 'go' });
          break;
        case 'declined':
          conn.destroy();
          finish({ fallback: 'declined' });
          break;
        case 'out':
          emit('stdout', frame.data);
          break;
        case 'err':
          emit('stderr', frame.data);
          break;
        case 'stdin': {
          if (!stdinAsked) {
            send({ t: 'stdin', data: '' }); // not this command's: it gets none, as it would here
            break;
          }
          const chunks = [];
          process.stdin.on('data', (c) => chunks.push(c));
          process.stdin.on('end', () => send({ t: 'stdin', data: Buffer.concat(chunks).toString('utf8') }));
          break;
        }
        case 'ask':
          void ask(frame.question).then((answer) => send({ t: 'answer', id: frame.id, answer: answer ?? null }));
          break;
        case 'exit':
          finish({ status: frame.status });
          conn.end();
          break;
      }
    };
    const ask = async (question) => {
      const { createInterface } = await import('node:readline/promises');
      rl = createInterface({ input: process.stdin, output: out('stderr'), terminal: true });
      try {
        return await rl.question(question);
      } catch {
        return undefined;
      } finally {
        rl.close();
        rl = undefined;
      }
    };
  });
}

/**
 * Starts a helper at `socket`, detached (it outlives this process and writes nowhere), running
 * `bin` (bin/aalis.cjs) in the helper's mode. Its directory is made first, this user's alone; one
 * that is not is left as it is and no helper is started. Two started at once: the second finds
 * the first answering and ends.
 */
function startHelper(bin, socket, who) {
  const dir = socket.slice(0, socket.lastIndexOf('/'));
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if (error.code !== 'EEXIST') return;
  }
  if (!ownPrivateDir(dir)) return;
  try {
    // loaded only here: a run through the helper does not pay for them
    const token = require('node:crypto').randomBytes(32).toString('hex');
    require('node:child_process').spawn(process.execPath, [bin, HELPER_MODE, socket, who], { detached: true, stdio: 'ignore', cwd: '/', env: { ...process.env, [TOKEN_VAR]: token } }).unref();
  } catch {
    // no helper this time: the next run tries again
  }
}

exports.execEntry = execEntry;
exports.helperSocket = helperSocket;
exports.helperWho = helperWho;
exports.viaHelper = viaHelper;
exports.startHelper = startHelper;
