export { type CliIo, run } from './run.js';
