import { join } from 'node:path';
import { approval, authority, DurableStore, definePlugin, IdentitySchema, sessions } from '@aalis/core';
import { z } from 'zod';
import { AuditRotationSchema } from './audit.js';
import { CODE_LENGTH_RANGE } from './code.js';
import { ApprovalDesk } from './desk.js';
import { approvalDesk } from './desk-service.js';
import { approvalReviewer } from './reviewer.js';

/** Config of {@link approvalPlugin}. */
export const ApprovalConfigSchema = z
  .object({
    /** How long an ask waits for an answer once shown (default five minutes). */
    timeoutMs: z
      .number()
      .int()
      .min(10)
      .max(24 * 60 * 60 * 1000)
      .default(5 * 60 * 1000),
    /** Letters in an approval code (default 6: about 600 million codes). */
    codeLength: z.number().int().min(CODE_LENGTH_RANGE[0]).max(CODE_LENGTH_RANGE[1]).default(6),
    /** When the audit log rotates: `maxBytes` (default 64 MiB), `maxAgeMs` (default 30 days). */
    auditLog: AuditRotationSchema,
    /**
     * Set where each person has their own space (the docker deployment): an ask is answered only
     * by the person it was raised for, and a grant revoked only by the person it was granted by,
     * whatever the owners list says; `admins` (the console's identity) may answer and revoke any.
     */
    persons: z.strictObject({ admins: z.array(IdentitySchema).default([]) }).optional(),
  })
  .strict()
  .prefault({});
/** Config of {@link approvalPlugin}. */
export type ApprovalConfig = z.input<typeof ApprovalConfigSchema>;

/**
 * Provides `approval` (the gate core's dispatcher and plugin-reach ask) and `approval-desk`
 * (replies by code, pending asks, grants). Keeps its audit log, pending asks and grants under
 * `<dataDir>/approval/`; asks left pending by a previous run are audited as expired at start.
 */
export const approvalPlugin = definePlugin({
  name: 'approval',
  provides: [approval, approvalDesk],
  inject: [sessions, authority],
  optional: [approvalReviewer],
  config: ApprovalConfigSchema,
  async apply(ctx, config) {
    if (ctx.dataDir === undefined) {
      throw new Error('the approval plugin needs the kernel to have a data directory (createKernel({ dataDir })) for its audit log and pending asks; without one no approval is given.');
    }
    const store = await DurableStore.open(join(ctx.dataDir, 'approval'));
    const desk = await ApprovalDesk.open({
      store,
      sessions: ctx.get(sessions),
      authority: ctx.get(authority),
      reviewer: () => ctx.maybe(approvalReviewer),
      emit: (event, payload) => ctx.emit(event, payload),
      timeoutMs: config.timeoutMs,
      codeLength: config.codeLength,
      auditRotation: config.auditLog,
      ...(config.persons !== undefined ? { persons: config.persons } : {}),
    });
    ctx.provide(approval, desk);
    ctx.provide(approvalDesk, desk);
    return () => desk.stop();
  },
});
