export { type CliIo, HELP, run } from './run.js';
export { EXIT_REFUSED, EXIT_SANDBOX_UNAVAILABLE, EXIT_TIMEOUT } from './exec.js';
export { type Explanation, type Match, matchOf } from './explain.js';
