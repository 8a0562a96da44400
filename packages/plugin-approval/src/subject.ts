import type { ApprovalRequest, ApprovalSubject } from '@aalis/core';
import { OriginTurnSchema } from '@aalis/core';
import { z } from 'zod';

/** zod schema of core's `ApprovalSubject`: asks cross a plugin boundary, so they are checked. */
export const ApprovalSubjectSchema: z.ZodType<ApprovalSubject> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('write-path'), path: z.string().min(1), toMake: z.string().min(1).optional(), rule: z.enum(['tier', 'boundary', 'landing']) }),
  z.object({
    kind: z.literal('host-exec'),
    command: z.string().min(1),
    argv: z.array(z.string()).min(1).optional(),
    cwd: z.string().min(1).optional(),
    stdin: z.string().optional(),
    rule: z.enum(['tier', 'boundary']),
  }),
  z.object({ kind: z.literal('network'), via: z.enum(['url', 'command', 'provider']), rule: z.enum(['tier', 'boundary']) }),
  z.object({ kind: z.literal('workflow'), workflow: z.string().min(1), rule: z.enum(['tier', 'boundary']) }),
  z.object({ kind: z.literal('tool'), tool: z.string().min(1), summary: z.string(), rule: z.literal('high-risk') }),
  z.object({ kind: z.literal('plan'), summary: z.string(), rule: z.literal('plan') }),
]);

/** zod schema of core's `ApprovalRequest`. */
export const ApprovalRequestSchema: z.ZodType<ApprovalRequest> = z.object({
  turn: OriginTurnSchema,
  subject: ApprovalSubjectSchema,
  summary: z.string().trim().min(1, 'an ask needs a one-line summary a person can read').max(2000),
  rememberable: z.boolean(),
});

/** What a remembered grant covers: one kind of subject, by one rule, for one target. */
export interface GrantScope {
  readonly kind: ApprovalSubject['kind'];
  readonly rule: ApprovalSubject['rule'];
  /** The path, command (argv and cwd, as JSON, when the ask names them), network route, workflow or tool the subject names. */
  readonly target: string;
}

/**
 * The scope a grant for this subject would have, or `undefined` when the subject can never
 * be remembered whatever the request says: a plan is approved once, by its nature, and a host
 * command only by its exact argv and cwd (an ask that does not name them is never remembered).
 */
export function scopeOf(subject: ApprovalSubject): GrantScope | undefined {
  switch (subject.kind) {
    case 'write-path':
      return { kind: subject.kind, rule: subject.rule, target: subject.path };
    case 'host-exec':
      // Exactly this argv in exactly this directory with exactly this input: a grant for `echo a`
      // never covers `echo b`, and a command the ask does not name cannot be remembered at all.
      return subject.argv && subject.cwd !== undefined
        ? { kind: subject.kind, rule: subject.rule, target: JSON.stringify({ argv: subject.argv, cwd: subject.cwd, ...(subject.stdin !== undefined ? { stdin: subject.stdin } : {}) }) }
        : undefined;
    case 'network':
      return { kind: subject.kind, rule: subject.rule, target: subject.via };
    case 'workflow':
      return { kind: subject.kind, rule: subject.rule, target: subject.workflow };
    case 'tool':
      return { kind: subject.kind, rule: subject.rule, target: subject.tool };
    case 'plan':
      return undefined;
  }
}

/** Whether two scopes are the same; targets are compared exactly (callers pass real paths). */
export function sameScope(a: GrantScope, b: GrantScope): boolean {
  return a.kind === b.kind && a.rule === b.rule && a.target === b.target;
}

/** The session a grant or an ask belongs to: a child session counts as its root's, as its settings do. */
export function scopeSessionOf(request: ApprovalRequest): string {
  return request.turn.session.rootId ?? request.turn.session.id;
}
