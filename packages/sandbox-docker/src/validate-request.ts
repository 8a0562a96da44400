import { parseRunRequest, parseSandboxCommand } from '@aalis/api-reach';
import type { DockerRunRequest } from './docker-sandbox.js';
import type { SessionExecRequest } from './session-container.js';

/**
 * Refuses a request the contract does not allow, before anything runs: the contract's own check
 * (`parseRunRequest`), on the request without the fields only this backend adds.
 */
export function validateRequest(request: DockerRunRequest): void {
  const { sandboxSpec: _spec, identity: _identity, ...contract } = request;
  parseRunRequest('docker', contract);
}

/** {@link validateRequest} for a command to an open session, whose cwd and policy are its own. */
export function validateSessionCommand(request: SessionExecRequest): void {
  parseSandboxCommand('docker', request);
}
