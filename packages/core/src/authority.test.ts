import { describe, expect, it } from 'vitest';
import { createAuthority } from './authority.js';
import { type OriginTurn, turnWithAuthors, UNAUTHENTICATED_AUTHOR } from './turn.js';

const owner = { platform: 'qq', userId: 'alice' };
const stranger = { platform: 'qq', userId: 'mallory' };
const ownerElsewhere = { platform: 'discord', userId: 'alice' };
const authority = createAuthority({ owners: { qq: ['alice'] } });

const own = (who: typeof owner | null, extra: Partial<OriginTurn> = {}): OriginTurn => ({
  session: { id: 's1' },
  platform: 'qq',
  speaker: who ?? stranger,
  authorised: who,
  inbound: { id: 'm1' },
  category: 'own',
  ...extra,
});

describe('principalOf', () => {
  it.each<[string, OriginTurn, 'owner' | 'other']>([
    ["the owner's own turn", own(owner), 'owner'],
    ["a stranger's own turn", own(stranger), 'other'],
    ['an owner id on a platform where it is not listed', own(ownerElsewhere), 'other'],
    ['a turn whose speaker claims to be the owner but was not authenticated', own(null, { speaker: owner }), 'other'],
    ["the owner's turn acting on a stranger's forwarded message", own(owner, { participants: [stranger] }), 'other'],
    ["a continuation of the owner's turn", { ...own(null), category: 'continuation', startedBy: own(owner) }, 'owner'],
    ["a subtask of a stranger's turn", { ...own(owner), category: 'subtask', startedBy: own(stranger) }, 'other'],
    ["a subtask of a subtask of the owner's turn", { ...own(null), category: 'subtask', startedBy: { ...own(null), category: 'subtask', startedBy: own(owner) } }, 'owner'],
    ["a continuation of the owner's turn that pulls in a stranger", { ...own(null), category: 'continuation', startedBy: own(owner), participants: [stranger] }, 'other'],
    // found by an attack: the middle of a chain was not looked at
    ["a continuation of a continuation that pulled in a stranger", { ...own(null), category: 'continuation', startedBy: { ...own(null), category: 'continuation', startedBy: own(owner), participants: [stranger] } }, 'other'],
    ["a subtask of a continuation a stranger is authorised for", { ...own(null), category: 'subtask', startedBy: { ...own(stranger), category: 'continuation', startedBy: own(owner) } }, 'other'],
    ["a continuation of a continuation of the owner's turn", { ...own(null), category: 'continuation', startedBy: { ...own(owner), category: 'continuation', startedBy: own(owner) } }, 'owner'],
    ["a stranger's call approved by the owner", own(stranger, { approvedBy: owner }), 'owner'],
    ["the owner's call approved by a stranger", own(owner, { approvedBy: stranger }), 'other'],
    ['a continuation that has no own turn at its root', { ...own(owner), category: 'continuation' }, 'other'],
  ])('%s -> %s', (_name, turn, principal) => {
    expect(authority.principalOf(turn)).toBe(principal);
  });

  it('the session audience does not matter: the owner in a group is still the owner', () => {
    expect(authority.principalOf(own(owner, { session: { id: 'group-42' } }))).toBe('owner');
  });
});

describe('turnWithAuthors: the authors of what the model reads act in the turn', () => {
  it.each<[string, { role: string; from?: typeof owner; unauthenticated?: true }[], 'owner' | 'other']>([
    ['only the owner wrote', [{ role: 'user', from: owner }, { role: 'assistant' }], 'owner'],
    ["a stranger's message in the conversation", [{ role: 'user', from: owner }, { role: 'user', from: stranger }], 'other'],
    ["an unauthenticated speaker's message", [{ role: 'user', unauthenticated: true }], 'other'],
    ["a message the daemon appended on the owner's choice (no author)", [{ role: 'user' }], 'owner'],
    ["a tool result naming a stranger is no author", [{ role: 'tool', from: stranger }], 'owner'],
  ])('%s -> %s', (_name, messages, principal) => {
    expect(authority.principalOf(turnWithAuthors(own(owner), messages))).toBe(principal);
  });

  it('the unauthenticated author is never an owner, even if a config names its platform', () => {
    const listed = createAuthority({ owners: { [UNAUTHENTICATED_AUTHOR.platform]: [UNAUTHENTICATED_AUTHOR.userId] } });
    expect(listed.isOwner(UNAUTHENTICATED_AUTHOR)).toBe(false);
  });

  it('with persons (the docker deployment), a turn is an owner\'s only when it acts for one and the same owner', () => {
    const carol = { platform: 'qq', userId: 'carol' };
    const persons = createAuthority({ owners: { qq: ['alice', 'carol'] }, persons: true });
    const shared = createAuthority({ owners: { qq: ['alice', 'carol'] } });
    // another owner's words in alice's turn: her calls would be steered in her own space by carol
    const steered = turnWithAuthors(own(owner), [{ role: 'user', from: carol }]);
    expect(persons.principalOf(steered)).toBe('other');
    expect(shared.principalOf(steered)).toBe('owner');
    expect(persons.principalOf(own(owner, { participants: [carol] }))).toBe('other');
    expect(persons.principalOf({ ...own(null), category: 'continuation', startedBy: own(carol), participants: [owner] })).toBe('other');
    // her own words, however many times named, and a continuation of her own turn
    expect(persons.principalOf(turnWithAuthors(own(owner), [{ role: 'user', from: owner }, { role: 'user', from: owner }]))).toBe('owner');
    expect(persons.principalOf({ ...own(owner), category: 'continuation', startedBy: own(owner) })).toBe('owner');
  });
});
