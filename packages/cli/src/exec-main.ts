// `aalis exec` alone, the entry of its single-file bundle (scripts/bundle.mjs, dist/aalis-exec.cjs),
// which bin/aalis.mjs runs for `aalis exec …`: one file to read and compile instead of ≈ 400
// modules to resolve, each a cost on every run. Only what exec needs is reachable from here (no
// other command, no daemon, no console), and the bundle is never the entry of anything that loads
// a plugin from outside it (a second copy of @aalis/core would not share its classes). No top-level
// await: the bundle is CommonJS, so that V8 can take a code cache for it (bin/exec-loader.mjs).
import './exec-jitless.js';
import { execCommand } from './exec.js';
import { markPhase } from './exec-phases.js';
import { runGuarded } from './guarded.js';
import { exitWith, processIo } from './process-io.js';

markPhase('loaded');
const [, ...argv] = process.argv.slice(2);
void runGuarded('exec', execCommand, argv, processIo()).then(exitWith);
