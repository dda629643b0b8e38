// The pjsip.conf options of subscriptions (res_pjsip_pubsub, res_pjsip_exten_state,
// res_pjsip_mwi) read as Asterisk reads them: defaults, values, and bad values refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildPjsipObject, loadPjsipConf } from '../../../src/channels/pjsip/config/index.ts';

test('endpoint and aor subscription options: Asterisk\'s defaults, then the values written', () => {
  const { config, errors, warnings } = loadPjsipConf(
    [
      '[global]', 'type=global', 'default_voicemail_extension=*99',
      '[plain]', 'type=endpoint', 'allow=ulaw',
      '[desk]', 'type=endpoint', 'allow=ulaw', 'aors=desk', 'allow_subscribe=no', 'subscribe_context=blf', 'sub_min_expiry=120',
      'mailboxes=1000@default, 1001@default,1000@default', 'mwi_subscribe_replaces_unsolicited=yes', 'voicemail_extension=*97',
      'aggregate_mwi=no', 'mwi_from_user=voicemail', 'notify_early_inuse_ringing=yes',
      '[desk]', 'type=aor', 'mailboxes=2000@default', 'voicemail_extension=*98',
      '',
    ].join('\n'),
    'pjsip.conf',
  );
  assert.deepEqual(errors, []);
  assert.deepEqual(warnings.filter((line) => /subscribe|mailbox|mwi|voicemail/.test(line)), [], 'no option of theirs is warned about');
  const plain = config.endpoints.get('plain')!;
  assert.equal(plain.allowSubscribe, true);
  assert.equal(plain.subscribeContext, undefined);
  assert.equal(plain.subMinExpiry, 0);
  assert.deepEqual(plain.mailboxes, []);
  assert.equal(plain.mwiSubscribeReplacesUnsolicited, false);
  assert.equal(plain.aggregateMwi, true);
  assert.equal(plain.notifyEarlyInuseRinging, false);
  assert.equal(config.global.defaultVoicemailExtension, '*99');
  const desk = config.endpoints.get('desk')!;
  assert.equal(desk.allowSubscribe, false);
  assert.equal(desk.subscribeContext, 'blf');
  assert.equal(desk.subMinExpiry, 120);
  assert.deepEqual(desk.mailboxes, ['1000@default', '1001@default'], 'listed once each, in order');
  assert.equal(desk.mwiSubscribeReplacesUnsolicited, true);
  assert.equal(desk.voicemailExtension, '*97');
  assert.equal(desk.aggregateMwi, false);
  assert.equal(desk.mwiFromUser, 'voicemail');
  assert.equal(desk.notifyEarlyInuseRinging, true);
  const aor = config.aors.get('desk')!;
  assert.deepEqual(aor.mailboxes, ['2000@default']);
  assert.equal(aor.voicemailExtension, '*98');
});

test('bad subscription values leave the object out with an error naming the key', () => {
  const bad = (fields: Record<string, string>) => buildPjsipObject({ type: 'endpoint', id: 'x', fields: { allow: 'ulaw', ...fields } }).errors.join('\n');
  assert.match(bad({ sub_min_expiry: '-1' }), /sub_min_expiry/);
  assert.match(bad({ allow_subscribe: 'maybe' }), /allow_subscribe/);
  assert.match(bad({ mailboxes: `${'m'.repeat(300)}@default` }), /mailboxes/);
  assert.match(bad({ aggregate_mwi: 'often' }), /aggregate_mwi/);
  assert.equal(bad({ mailboxes: 'a@default' }), '');
});
