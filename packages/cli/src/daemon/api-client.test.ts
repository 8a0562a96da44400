// The adapter's judge (api-client.ts) as a table: which turns, conversations and `by`s an
// adapter's token may carry. The daemon's own test (adapter-access.test.ts) runs it through HTTP.
import type { OriginTurn } from '@aalis/core';
import { describe, expect, it } from 'vitest';
import { actingIdentity, type ApiClient, checkKnownConversationOf, checkTurnOf, OWNER_CLIENT, seesConversation } from './api-client.js';

const BRIDGE: ApiClient = { kind: 'adapter', name: 'tg', platform: 'telegram' };
const TG = { platform: 'telegram', userId: 'a' };
const CHAT = { platform: 'chat', userId: 'a' };
const index = { platformOf: (id: string) => ({ 'telegram:known': 'telegram', 'chat-known': 'chat', 'telegram:owners': 'chat' })[id] };

function turn(over: Partial<OriginTurn> = {}): OriginTurn {
  return { session: { id: 'telegram:new' }, platform: 'telegram', speaker: TG, authorised: TG, inbound: { id: 'm' }, category: 'own', ...over };
}

describe('checkTurnOf', () => {
  it.each([
    ['its platform, a new conversation', turn(), undefined],
    ['its platform, its conversation', turn({ session: { id: 'telegram:known' } }), undefined],
    ['its platform, a child of its conversation', turn({ session: { id: 'telegram:child', rootId: 'telegram:known' } }), undefined],
    ["the owner's default conversation", turn({ session: { id: 'cli' } }), /names its conversations 'telegram:<id>', and 'cli' is not one/],
    ['an id that only looks like its platform', turn({ session: { id: 'telegramx' } }), /'telegramx' is not one/],
    ['a conversation of its name that another platform began', turn({ session: { id: 'telegram:owners' } }), /conversation 'telegram:owners' is not one of its platform's/],
    ['an unauthenticated speaker of its platform', turn({ authorised: null }), undefined],
    ['another platform', turn({ platform: 'chat' }), /the turn says it came from platform 'chat'/],
    ["another platform's speaker", turn({ speaker: CHAT }), /the speaker is of platform 'chat'/],
    ["another platform's authorised identity", turn({ authorised: CHAT }), /the authorised identity is of platform 'chat'/],
    ["another platform's participant", turn({ participants: [TG, CHAT] }), /a participant is of platform 'chat'/],
    ["another platform's conversation", turn({ session: { id: 'chat-known' } }), /'chat-known' is not one/],
    ["another platform's root", turn({ session: { id: 'telegram:child', rootId: 'chat-known' } }), /'chat-known' is not one/],
    ['a starter of another platform', turn({ category: 'continuation', startedBy: turn({ platform: 'chat', speaker: CHAT, authorised: CHAT }) }), /came from platform 'chat'/],
    ["a starter naming another platform's participant", turn({ category: 'subtask', startedBy: turn({ participants: [CHAT] }) }), /a participant of the turn that started it is of platform 'chat'/],
    ["a starter in another platform's conversation", turn({ category: 'continuation', startedBy: turn({ session: { id: 'telegram:owners' } }) }), /conversation 'telegram:owners'/],
  ] as const)('%s', (_what, t, refused) => {
    if (refused === undefined) expect(() => checkTurnOf(BRIDGE, t, index)).not.toThrow();
    else expect(() => checkTurnOf(BRIDGE, t, index)).toThrow(refused);
    // the owner's client sends any turn
    expect(() => checkTurnOf(OWNER_CLIENT, t, index)).not.toThrow();
  });
});

describe('conversations and by', () => {
  it('an adapter sees and touches only conversations that began on its platform; one never noted is not its', () => {
    expect(seesConversation(BRIDGE, 'telegram:known', index)).toBe(true);
    expect(seesConversation(BRIDGE, 'chat-known', index)).toBe(false);
    expect(seesConversation(BRIDGE, 'never-noted', index)).toBe(false);
    expect(() => checkKnownConversationOf(BRIDGE, 'child', 'telegram:known', index)).not.toThrow();
    expect(() => checkKnownConversationOf(BRIDGE, 'child', 'chat-known', index)).toThrow(/'child' is not one of its platform's/);
    expect(() => checkKnownConversationOf(BRIDGE, 'x', 'never-noted', index)).toThrow(/'x' is not one of its platform's/);
  });

  it("an adapter must name whom it acts for, on its platform; the owner falls back to the console's identity", () => {
    const console = { platform: 'cli', userId: 'me' };
    expect(actingIdentity(OWNER_CLIENT, undefined, console, 'answers')).toEqual(console);
    expect(() => actingIdentity(BRIDGE, undefined, console, 'answers')).toThrow(/must say whom it answers for/);
    expect(() => actingIdentity(BRIDGE, CHAT, console, 'answers')).toThrow(/by names platform 'chat'/);
    expect(actingIdentity(BRIDGE, TG, console, 'answers')).toEqual(TG);
  });
});
