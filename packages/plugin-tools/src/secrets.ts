// The never-written rule moved to api-reach, where the credential applies it to every tool's
// writes (a plugin's too); these names stay importable from here.
export { isNeverWritten, NEVER_WRITTEN, neverWrittenMessage } from '@aalis/api-reach';
