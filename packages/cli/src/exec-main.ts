// `aalis exec` alone, the entry of its single-file bundle (scripts/bundle.mjs, dist/aalis-exec.cjs),
// which bin/aalis.cjs runs for `aalis exec …`: one file to read and compile instead of ≈ 400
// modules to resolve, each a cost on every run. Only what exec needs is reachable from here (no
// other command, no daemon, no console), and the bundle is never the entry of anything that loads
// a plugin from outside it (a second copy of @aalis/core would not share its classes). No top-level
// await: the bundle is CommonJS, so that V8 can take a code cache for it (bin/exec-loader.mjs).
import './exec-jitless.js';
import { execCommand } from './exec.js';
import { EXEC_HELPER_MODE, EXEC_HELPER_TOKEN, serveExec } from './exec-server.js';
import { markPhase } from './exec-phases.js';
import { runGuarded } from './guarded.js';
import { exitWith, processIo } from './process-io.js';

markPhase('loaded');
const [mode, ...argv] = process.argv.slice(2);
if (mode === EXEC_HELPER_MODE) {
  // the exec helper (exec-server.ts), started detached by bin/exec-client.cjs: no terminal, nothing to print
  const idle = Number(process.env.AALIS_EXEC_HELPER_IDLE);
  // its token stays in this process's initial environment (/proc/<pid>/environ, where clients read it), not in process.env
  const token = process.env[EXEC_HELPER_TOKEN] ?? '';
  delete process.env[EXEC_HELPER_TOKEN];
  serveExec({ socket: argv[0] ?? '', who: argv[1] ?? '', token, ...(Number.isFinite(idle) && idle > 0 ? { idleMs: idle * 1000 } : {}) }).then(
    () => process.exit(0),
    () => process.exit(1),
  );
} else void runGuarded('exec', execCommand, argv, processIo()).then(exitWith);
