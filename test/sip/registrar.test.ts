// Registrar bindings: expiry, refresh, unregister, wildcard, max_contacts and remove_existing,
// interval bounds and CSeq ordering, as RFC 3261 §10.3 and Asterisk's aor options define them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bindingKey, DEFAULT_AOR_RULES, Registrar, type AorRules, type RegisterRequest } from '../../src/sip/registrar.ts';

const source = { transport: 'udp', address: '192.0.2.10', port: 5062 } as const;

function setup(rules: Partial<AorRules> = {}) {
  let clock = 1_000_000;
  const registrar = new Registrar(() => clock);
  const changes: string[] = [];
  registrar.onChange((change) => changes.push(`${change.kind} ${change.binding.uri}`));
  let cseq = 1;
  const register = (contacts: RegisterRequest['contacts'], extra: Partial<RegisterRequest> = {}) =>
    registrar.register({ aor: 'alice', wildcard: false, contacts, callId: 'call-1', cseq: cseq++, source, ...extra }, { ...DEFAULT_AOR_RULES, ...rules });
  return { registrar, changes, register, advance: (ms: number) => (clock += ms), now: () => clock };
}

test('a binding is added with the asked expiry, refreshed, and removed with expires=0', () => {
  const { registrar, changes, register, now } = setup();
  const first = register([{ uri: 'sip:alice@192.0.2.10:5062' }], { expires: 120 });
  assert.equal(first.status, 200);
  const [binding] = registrar.lookup('alice');
  assert.equal(binding.expiresAt, now() + 120_000);
  assert.equal(register([{ uri: 'sip:alice@192.0.2.10:5062', expires: 300 }]).status, 200);
  assert.equal(registrar.lookup('alice')[0].expiresAt, now() + 300_000);
  assert.equal(register([{ uri: 'sip:alice@192.0.2.10:5062' }], { expires: 0 }).status, 200);
  assert.deepEqual(registrar.lookup('alice'), []);
  assert.deepEqual(changes, ['added sip:alice@192.0.2.10:5062', 'refreshed sip:alice@192.0.2.10:5062', 'removed sip:alice@192.0.2.10:5062']);
  registrar.close();
});

test('expiry is capped by maximum_expiration, defaulted by default_expiration, refused under minimum_expiration', () => {
  const { registrar, register, now } = setup({ maximumExpiration: 600, defaultExpiration: 90, minimumExpiration: 60 });
  register([{ uri: 'sip:a@h1' }], { expires: 99999 });
  assert.equal(registrar.lookup('alice')[0].expiresAt, now() + 600_000);
  register([{ uri: 'sip:a@h2' }]);
  assert.equal(registrar.lookup('alice')[1].expiresAt, now() + 90_000);
  const brief = register([{ uri: 'sip:a@h3' }], { expires: 30 });
  assert.deepEqual(brief, { status: 423, reason: 'Interval Too Brief', minExpires: 60 });
  registrar.close();
});

test('expired bindings disappear and are reported', () => {
  const { registrar, changes, register, advance } = setup();
  register([{ uri: 'sip:a@h1' }], { expires: 60 });
  advance(61_000);
  assert.deepEqual(registrar.lookup('alice'), []);
  registrar.expire();
  assert.deepEqual(changes, ['added sip:a@h1', 'expired sip:a@h1']);
  assert.deepEqual(registrar.aors(), []);
  registrar.close();
});

test('max_contacts refuses a new device unless remove_existing, which replaces the oldest', () => {
  const strict = setup({ maxContacts: 1 });
  assert.equal(strict.register([{ uri: 'sip:a@phone1' }]).status, 200);
  assert.equal(strict.register([{ uri: 'sip:a@phone2' }]).status, 403);
  assert.equal(strict.register([{ uri: 'sip:a@PHONE1' }]).status, 200, 'the same device (host case-insensitive) refreshes');
  assert.deepEqual(strict.registrar.lookup('alice').map((b) => b.uri), ['sip:a@PHONE1']);
  strict.registrar.close();

  const replacing = setup({ maxContacts: 1, removeExisting: true });
  replacing.register([{ uri: 'sip:a@phone1' }]);
  assert.equal(replacing.register([{ uri: 'sip:a@phone2' }]).status, 200);
  assert.deepEqual(replacing.registrar.lookup('alice').map((b) => b.uri), ['sip:a@phone2']);
  assert.deepEqual(replacing.changes, ['added sip:a@phone1', 'removed sip:a@phone1', 'added sip:a@phone2']);
  replacing.registrar.close();
});

test('Contact: * removes every binding, but only with Expires: 0', () => {
  const { registrar, register } = setup();
  register([{ uri: 'sip:a@h1' }, { uri: 'sip:a@h2' }]);
  assert.equal(register([], { wildcard: true, expires: 3600 }).status, 400);
  assert.equal(register([{ uri: 'sip:a@h3' }], { wildcard: true, expires: 0 }).status, 400);
  assert.equal(register([], { wildcard: true, expires: 0 }).status, 200);
  assert.deepEqual(registrar.lookup('alice'), []);
  registrar.close();
});

test('a request with an old CSeq on the same Call-ID is refused; a query lists the bindings', () => {
  const { registrar, register } = setup();
  register([{ uri: 'sip:a@h1' }], { cseq: 10 });
  assert.equal(register([{ uri: 'sip:a@h1' }], { cseq: 10 }).status, 500);
  assert.equal(register([{ uri: 'sip:a@h1' }], { cseq: 9, callId: 'other' }).status, 200, 'another Call-ID starts its own sequence');
  const query = register([]);
  assert.equal(query.status, 200);
  assert.equal(query.status === 200 && query.bindings.length, 1);
  registrar.close();
});

test('hostile requests are bounded: too many contacts, huge URIs, bad expiry values', () => {
  const { registrar, register } = setup();
  const many = Array.from({ length: 33 }, (_, i) => ({ uri: `sip:a@h${i}` }));
  assert.equal(register(many).status, 400);
  assert.equal(register([{ uri: `sip:${'a'.repeat(2000)}@h` }]).status, 400);
  assert.equal(register([{ uri: 'sip:a@h', expires: Number.NaN }]).status, 400);
  assert.equal(register([{ uri: 'sip:a@h', expires: -5 }]).status, 400);
  // Without max_contacts an AOR still holds at most 64 bindings.
  for (let i = 0; i < 2; i++) register(Array.from({ length: 32 }, (_, j) => ({ uri: `sip:a@b${i}-${j}` })));
  assert.equal(register([{ uri: 'sip:a@one-too-many' }]).status, 403);
  assert.equal(registrar.lookup('alice').length, 64);
  registrar.close();
});

test('binding keys: scheme and host case-insensitive, user exact, parameters ignored', () => {
  assert.equal(bindingKey('SIP:Alice@EXAMPLE.com;transport=tcp'), 'sip:Alice@example.com');
  assert.notEqual(bindingKey('sip:alice@example.com'), bindingKey('sip:Alice@example.com'));
  assert.equal(bindingKey('sip:example.com'), 'sip:example.com');
});

test('a rewritten contact keeps what the phone wrote (for the 200 OK); findByUri finds a live binding by its stored URI', () => {
  const { registrar, register, advance } = setup();
  const tcp = { transport: 'tcp', address: '203.0.113.7', port: 40123 } as const;
  register([{ uri: 'sip:alice@203.0.113.7:40123;transport=tcp', reportedUri: 'sip:alice@10.0.0.9:5999' }], { expires: 120, source: tcp });
  register([{ uri: 'sip:alice@192.0.2.10:5062', reportedUri: 'sip:alice@192.0.2.10:5062' }], { expires: 120 });
  const [rewritten, plain] = registrar.lookup('alice');
  assert.equal(rewritten.reportedUri, 'sip:alice@10.0.0.9:5999');
  assert.equal(plain.reportedUri, undefined, 'nothing kept when nothing was rewritten');
  assert.deepEqual(registrar.findByUri('sip:alice@203.0.113.7:40123;transport=tcp')?.source, tcp);
  assert.equal(registrar.findByUri('sip:alice@10.0.0.9:5999'), undefined);
  advance(121_000);
  assert.equal(registrar.findByUri('sip:alice@203.0.113.7:40123;transport=tcp'), undefined, 'not once expired');
  registrar.close();
});

test('remove_unavailable: with max_contacts reached an unavailable contact makes room, the soonest to expire first', () => {
  const down = new Set(['sip:a@h1', 'sip:a@h2']);
  const unavailable = (binding: { uri: string }) => down.has(binding.uri);
  const { registrar, register } = setup({ maxContacts: 3, removeUnavailable: true });
  register([{ uri: 'sip:a@h1' }], { expires: 600 });
  register([{ uri: 'sip:a@h2' }], { expires: 300 });
  register([{ uri: 'sip:a@h3' }], { expires: 300 });
  const outcome = register([{ uri: 'sip:a@h4' }], { expires: 300, unavailable });
  assert.equal(outcome.status, 200);
  assert.deepEqual(registrar.lookup('alice').map((b) => b.uri), ['sip:a@h1', 'sip:a@h3', 'sip:a@h4']);
  registrar.close();
});

test('remove_unavailable without remove_existing refuses (and removes nothing) when the unavailable contacts are not enough', () => {
  const { registrar, register } = setup({ maxContacts: 1, removeUnavailable: true });
  register([{ uri: 'sip:a@h1' }]);
  const refused = register([{ uri: 'sip:a@h2' }], { unavailable: () => false });
  assert.equal(refused.status, 403);
  // Without the option the unavailable contact is kept and the REGISTER refused.
  const plain = setup({ maxContacts: 1 });
  plain.register([{ uri: 'sip:a@h1' }]);
  assert.equal(plain.register([{ uri: 'sip:a@h2' }], { unavailable: () => true }).status, 403);
  assert.deepEqual(registrar.lookup('alice').map((b) => b.uri), ['sip:a@h1']);
  registrar.close();
  plain.registrar.close();
});

test('remove_unavailable with remove_existing replaces an unavailable contact before the oldest one', () => {
  const { registrar, register } = setup({ maxContacts: 2, removeExisting: true, removeUnavailable: true });
  register([{ uri: 'sip:a@h1' }]);
  register([{ uri: 'sip:a@h2' }]);
  assert.equal(register([{ uri: 'sip:a@h3' }], { unavailable: (binding) => binding.uri === 'sip:a@h2' }).status, 200);
  assert.deepEqual(registrar.lookup('alice').map((b) => b.uri), ['sip:a@h1', 'sip:a@h3']);
  registrar.close();
});
