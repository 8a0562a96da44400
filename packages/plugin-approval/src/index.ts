export { AUDIT_LOG, type AuditEntry, AuditLog, type AuditRecord, AuditRecordSchema } from './audit.js';
export { CODE_ALPHABET, CODE_LENGTH_RANGE, type ParsedCode, parseCode, randomCode } from './code.js';
export { ApprovalDesk, type ApprovalDeskService, approvalDesk, type DeskOptions, type PendingView, type RevokeResult } from './desk.js';
export { type ApprovalRequestedEvent, type ApprovalResolvedEvent, RESOLUTION_SOURCES, type ResolutionSource } from './events.js';
export { GRANTS_DOCUMENT, type Grant } from './grants.js';
export { type ApprovalConfig, ApprovalConfigSchema, approvalPlugin } from './plugin.js';
export { REPLY_DECISIONS, REPLY_REFUSALS, type ReplyDecision, type ReplyRefusal, type ReplyRequest, ReplyRequestSchema, type ReplyResult } from './reply.js';
export { type ApprovalReviewer, approvalReviewer, type ReviewRequest, type ReviewVerdict, ReviewVerdictSchema } from './reviewer.js';
export { ApprovalRequestSchema, ApprovalSubjectSchema, type GrantScope, scopeOf } from './subject.js';
