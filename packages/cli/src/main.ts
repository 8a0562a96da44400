// The `aalis` command, every subcommand (bin/aalis.cjs runs `aalis exec` from its bundle instead,
// exec-main.ts).
import { exitWith, processIo } from './process-io.js';
import { run } from './run.js';

await exitWith(await run(process.argv.slice(2), processIo()));
