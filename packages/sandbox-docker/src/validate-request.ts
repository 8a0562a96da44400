import { type SandboxRunRequest, SandboxUnavailableError } from '@aalis/api-reach';

/** Refuses a request the contract does not allow, before anything runs. */
export function validateRequest(request: Pick<SandboxRunRequest, 'argv' | 'cwd' | 'timeoutMs' | 'maxOutputBytes'>): void {
  const bad = (what: string) => new SandboxUnavailableError('docker', `the run request is invalid: ${what}`, 'pass an argv of non-empty strings, an absolute cwd and a positive timeout');
  if (!Array.isArray(request.argv) || request.argv.length === 0 || request.argv.some((a) => typeof a !== 'string' || a.includes('\0'))) throw bad('argv');
  if (request.argv[0] === '') throw bad('argv[0] is empty');
  if (typeof request.cwd !== 'string' || !request.cwd.startsWith('/')) throw bad(`cwd ${String(request.cwd)} is not an absolute path`);
  if (!(request.timeoutMs > 0) || !Number.isFinite(request.timeoutMs)) throw bad(`timeoutMs ${request.timeoutMs}`);
  if (request.maxOutputBytes !== undefined && !(request.maxOutputBytes >= 0)) throw bad('maxOutputBytes');
}
