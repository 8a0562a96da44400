export { type CliIo, HELP, run } from './run.js';
export { EXIT_REFUSED, EXIT_SANDBOX_UNAVAILABLE, EXIT_TIMEOUT } from './exec.js';
export { type Explanation, type Match, matchOf } from './explain.js';
export { ConfigError, type DaemonConfig, DaemonConfigSchema, parseConfig } from './daemon/config.js';
