import { defineService, type OriginTurn } from '@aalis/core';
import type { ReachCredential } from './credential.js';

/** The reach service: issues the credential of one tool call. Provided by `@aalis/plugin-reach`. */
export interface ReachService {
  /**
   * Issues the credential of one tool call, from the turn it belongs to (the same turn the
   * authority service judges the principal from). A call without local effect gets a credential
   * whose `exec` is `none`.
   */
  forCall(call: OriginTurn): Promise<ReachCredential>;
}

/** The `reach` service descriptor. */
export const reach = defineService<ReachService>('reach');
