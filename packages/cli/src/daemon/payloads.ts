import { ChatMessageSchema, IdentitySchema, OriginTurnSchema, PAGE_CODE_KINDS, RISK_LEVELS, SessionSettingsSchema } from '@aalis/core';
import { RESOLUTION_SOURCES } from '@aalis/plugin-approval';
import { z } from 'zod';
import { AdapterNameSchema, AdapterPlatformSchema } from './adapter-tokens.js';
import { STREAMED_EVENTS } from './events.js';

// The shapes an adapter author meets, as zod schemas: the routes validate bodies and build answers
// with them, and DAEMON.md's payload tables are generated from them (`pnpm --filter @aalis/cli
// docs:daemon`), so the documentation cannot drift from what the daemon does.

/**
 * Fields of a turn only the daemon may set: an adapter vouches for the identity it authenticated
 * (`authorised`, `by`), never for an approval. `approvedBy` makes the approver the principal, so
 * taking it from an adapter would let any adapter's word run a non-owner's call as the owner's.
 */
export const DAEMON_ONLY_TURN_FIELDS = ['approvedBy'] as const;

function daemonOnlyFieldsOf(raw: unknown, path: readonly string[] = []): string[][] {
  if (typeof raw !== 'object' || raw === null) return [];
  const here = DAEMON_ONLY_TURN_FIELDS.filter((f) => f in raw).map((f) => [...path, f]);
  return [...here, ...daemonOnlyFieldsOf((raw as { startedBy?: unknown }).startedBy, [...path, 'startedBy'])];
}

/** A turn as an adapter may send it: core's `OriginTurnSchema`, with the daemon-only fields refused (not dropped). */
export const AdapterTurnSchema = z
  .unknown()
  .transform((raw, ctx) => {
    for (const path of daemonOnlyFieldsOf(raw)) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: 'only the daemon sets this (when an owner answers an ask); an adapter vouches only for the identity it authenticated (turn.authorised), so leave it out',
      });
    }
    return raw;
  })
  .pipe(OriginTurnSchema)
  .meta({ id: 'OriginTurn', description: 'the turn (see the OriginTurn table)' });

const Session = z.string().describe('the root conversation id');
const SessionRef = z.object({ id: z.string(), rootId: z.string().optional() }).describe('the conversation (a child session names its root)');

/** `POST /api/turns`. */
export const TurnBody = z
  .object({
    turn: AdapterTurnSchema,
    message: ChatMessageSchema.shape.content.optional().describe("appended to the conversation's history; the agent answers it (events on GET /api/events) unless reply is false"),
    reply: z.boolean().default(true).describe('false: only record the message (e.g. group chatter not addressed to the agent)'),
  })
  .strict();

/** `POST /api/tools/call`. */
export const CallBody = z
  .object({
    tool: z.string().min(1).describe('a name from GET /api/tools'),
    params: z.unknown().describe("the tool's parameters, as its JSON Schema in GET /api/tools says"),
    turn: AdapterTurnSchema,
    callId: z.string().min(1).max(200).optional().describe('your id for the call; shown beside its asks'),
  })
  .strict();

/** The answer of `POST /api/turns`. */
export const TurnAnswerSchema = z.object({
  session: Session,
  principal: z.enum(['owner', 'other']).describe("owner only when every identity the turn acts for is an owner's"),
  settings: SessionSettingsSchema.describe("the conversation's settings"),
  turnId: z.string().optional().describe("set when the agent took the message: its turn's events carry this turnId"),
});

/** The answer of `GET /api/sessions/:id/messages`. */
export const MessagesAnswerSchema = z.object({
  session: z.string().describe('the conversation id'),
  messages: z.array(ChatMessageSchema).describe('its history, oldest first: user, assistant (with toolCalls), tool results (toolCallId), and the agent\'s system notes (a failed turn\'s error)'),
  running: z.object({ turnId: z.string(), startedAt: z.number() }).optional().describe('the turn running in it, if any'),
});

/** The answer of `POST /api/sessions/:id/stop`. */
export const StopAnswerSchema = z.object({
  session: z.string(),
  stopped: z.boolean().describe('false when no turn was running'),
  turnId: z.string().optional().describe('the turn that was stopped'),
});

/** The answer of `POST /api/tools/call`: the tool's outcome (a refusal is not an API error). */
export const ToolOutcomeSchema = z.union([
  z.object({ ok: z.literal(true), value: z.unknown().describe("the tool's result (run_command: where, stdout, stderr, exitCode, signal, timedOut, truncated, grantedWrites)") }),
  z.object({ ok: z.literal(false), kind: z.string().describe('why: denied, invalid-params, unavailable, …'), message: z.string().describe('for the model to read') }),
]);

/** The answer of `GET /api/tools/spec`: the spec tools (002), what was left out and why, and the tool manager's audit log. */
export const SpecToolsAnswerSchema = z.object({
  dir: z.string().describe('the tools directory (a real path); one folder a tool'),
  engine: z
    .object({ configured: z.boolean(), available: z.boolean(), detail: z.string() })
    .describe('whether container profiles (stdio, network, builder) can run; when not, their tools answer unavailable and nothing runs'),
  tools: z.array(z.object({ name: z.string(), profile: z.string(), generated: z.boolean().describe('written by the tool manager: high-risk whatever it declares') })),
  problems: z.array(z.object({ tool: z.string(), file: z.string(), field: z.string(), message: z.string() })).describe('tool folders left out at the last load, each with the file and field at fault'),
  audit: z
    .array(z.object({ ts: z.string(), who: z.string(), action: z.string(), tool: z.string(), result: z.string(), detail: z.string().optional() }))
    .describe("the tool manager's audit log, oldest first: a started line before each action, then its result"),
});

/** The answer of `POST /api/tools/reload`: what the reload registered, added, removed and left out. */
export const ReloadAnswerSchema = z.object({
  ok: z.boolean().describe('false when any folder was left out'),
  loaded: z.array(z.string()),
  added: z.array(z.string()),
  removed: z.array(z.string()),
  problems: z.array(z.object({ tool: z.string(), file: z.string(), field: z.string(), message: z.string() })),
});

/** The body of `POST /api/console/claim` (no token: the code is the credential, once; console-codes.ts). */
export const ConsoleClaimBody = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_-]{22}$/, 'expected the id part of a console code: 22 base64url characters (the part before the dot)'),
    for: z.enum(PAGE_CODE_KINDS).describe("the page the code was opened on: a code of the other page is refused (409) and stays live"),
  })
  .strict();

/** The answer of `POST /api/console/claim`: the code's secret (the daemon's token, or a pod capability) sealed under the code's key. */
export const ConsoleClaimAnswerSchema = z.object({
  iv: z.string().describe('the 12-byte AES-GCM IV, base64url'),
  sealed: z
    .string()
    .describe("the secret sealed with AES-256-GCM under the code's key (the part after the dot), bound to 'aalis-page-code', the page and the id, NUL-separated; the 16-byte tag after the ciphertext; base64url"),
  keep: z.boolean().describe("whether the page may keep the secret in its tab's session storage: false for a token fixed by AALIS_TOKEN, which outlives the daemon (whatever serves its port next could read the tab's storage)"),
});

/** The answer of `POST /api/console/address`. */
export const ConsoleAddressAnswerSchema = z.object({
  address: z.string().describe("the console's address with a new one-time code in its fragment (#code=<id>.<key>)"),
  expiresAt: z.number().describe('when the code stops opening the console unclaimed (ms since the epoch)'),
});

/** One adapter as `GET /api/adapters` lists it (never its token). */
const AdapterViewSchema = z.object({
  name: AdapterNameSchema.describe('what the adapter is called'),
  platform: z.string().describe('the platform it speaks for: its turns, identities and conversations are of this platform only'),
  created: z.string().describe('when its current token was made (ISO 8601)'),
});

/** The body of `POST /api/adapters`. */
export const AdapterAddBody = z
  .object({
    name: AdapterNameSchema.describe("the adapter's name (lower-case letters, digits, '-', '_')"),
    platform: AdapterPlatformSchema.describe('the platform it speaks for (an identity\'s platform: telegram, say)'),
    replace: z.boolean().optional().describe("true: an adapter of that name gets a new token (its old one stops working); otherwise a name in use is refused (409 conflict)"),
  })
  .strict();

/** The answer of `POST /api/adapters`: the token, shown once (the daemon keeps only its digest). */
export const AdapterAddAnswerSchema = z.object({
  adapter: AdapterViewSchema,
  token: z.string().describe("the adapter's token, for its 'Authorization: Bearer'; shown this once"),
});

/** The answer of `GET /api/adapters`. */
export const AdaptersAnswerSchema = z.object({ adapters: z.array(AdapterViewSchema) });

/** The body of `POST /api/adapters/remove`. */
export const AdapterRemoveBody = z.object({ name: AdapterNameSchema.describe('the adapter whose token stops working now') }).strict();

/** The answer of `GET /api/tools`. */
export const ToolsAnswerSchema = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      risk: z.enum(RISK_LEVELS).describe('high-risk tools are asked before they run'),
      parameters: z.record(z.string(), z.unknown()).describe("the parameters' JSON Schema (draft 2020-12), as the daemon validates them"),
    }),
  ),
});

/** The answer of `GET` and `POST /api/sessions/:id/settings`. */
export const SettingsViewSchema = z.object({
  session: Session,
  settings: SessionSettingsSchema,
  pending: z.number().int().describe('asks waiting in it'),
  grants: z.number().int().describe('remembered grants in it'),
});

/** The `ready` event: the first of every stream. */
export const ReadyEventSchema = z.object({
  events: z.array(z.enum(STREAMED_EVENTS)).describe('the event names this stream carries'),
  session: z.string().optional().describe('the ?session= filter, when given'),
});

/** The `approval/resolved` event. */
export const ApprovalResolvedEventSchema = z.object({
  id: z.string(),
  code: z.string().nullable().describe('null when the ask was answered without being shown (a grant, the none approver)'),
  session: SessionRef,
  outcome: z
    .union([
      z.object({ outcome: z.literal('approved'), by: z.union([IdentitySchema, z.literal('reviewer')]), remembered: z.boolean() }),
      z.object({ outcome: z.literal('rejected'), by: z.union([IdentitySchema, z.enum(['reviewer', 'policy'])]), reason: z.string() }),
      z.object({ outcome: z.literal('expired'), afterMs: z.number() }),
    ])
    .describe('how it ended: the outcome itself is outcome.outcome'),
  via: z.enum(RESOLUTION_SOURCES),
  grantId: z.string().optional().describe('when a grant answered it, or a reply made one'),
});

/** The `session/settings-changed` event. */
export const SettingsChangedEventSchema = z.object({
  sessionId: z.string().describe('the root conversation id (a string here, where approval events carry a session object)'),
  previous: SessionSettingsSchema,
  next: SessionSettingsSchema,
});

const AgentBase = {
  session: z.string().describe('the root conversation id (the ?session= filter)'),
  conversation: z.string().describe('the conversation the turn runs in (the root or a child)'),
  turnId: z.string().describe("the turnId POST /api/turns answered"),
};

/** The `turn/started` event. */
export const TurnStartedEventSchema = z.object({ ...AgentBase, runMode: z.string().describe('the run mode the turn began in') });

/** The `message/delta` event. */
export const MessageDeltaEventSchema = z.object({ ...AgentBase, text: z.string().describe('the next piece of the reply as the model streams it; message/created follows with the whole message') });

/** The `message/created` event. */
export const MessageCreatedEventSchema = z.object({ ...AgentBase, message: ChatMessageSchema.describe('the message as kept in the history') });

/** The `tool/started` event. */
export const ToolStartedEventSchema = z.object({
  ...AgentBase,
  callId: z.string().describe('the call; its asks list it in running'),
  tool: z.string(),
  params: z.unknown().describe('the parameters as the model wrote them (the raw text when they are not JSON)'),
});

/** The `tool/ended` event. */
export const ToolEndedEventSchema = z.object({ ...AgentBase, callId: z.string(), tool: z.string(), outcome: ToolOutcomeSchema.describe('the structured outcome, as POST /api/tools/call answers it') });

/** The `turn/ended` event. */
export const TurnEndedEventSchema = z.object({
  ...AgentBase,
  state: z.enum(['answered', 'stopped', 'failed']),
  error: z
    .object({ code: z.string().describe('model-unreachable, model-bad-reply, model-not-configured, max-steps, …'), message: z.string(), fix: z.string().optional() })
    .optional()
    .describe('why it failed; also kept in the history as a system note'),
});

/** A schema as JSON Schema (its input side: what a sender must send); a part JSON Schema cannot say becomes `{}` (any). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  try {
    return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch (error) {
    return { description: `not representable as JSON Schema (${error instanceof Error ? error.message : String(error)}); the daemon still validates it` };
  }
}
