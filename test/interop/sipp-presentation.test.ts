// Caller presentation over SIP against SIPp, as res_pjsip_caller_id and res_pjsip_session do it:
// a trusted provider (trust_id_inbound) sends a caller who withholds its number (P-Asserted-Identity
// with `Privacy: id`, call-withheld-expect-busy.xml); the dialplan reads CALLERID(pres) and dials a
// SIPp callee (busy-incoming.xml, traced) that shows what the outbound INVITE carried: From
// `"Anonymous" <sip:anonymous@anonymous.invalid>`, and the caller's P-Asserted-Identity with
// `Privacy: id` and Remote-Party-ID with `privacy=full` only towards an endpoint with
// trust_id_outbound. A caller the dialplan makes private with Set(CALLERID(pres)=prohib) is sent the
// same way, also through a Local pair (Dial() hands the presentation to `;1`, `;1` to `;2`).
// Each callee refuses with 486 so the call ends without media.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  explained, HAVE_SIPP, nextEvent, randomPort, sipp, sippCall, sippServerInSuite, startSippServer, tracedMessages, type Json, type SippServer,
} from './sipp-peer.ts';

const PLAIN_PORT = randomPort();
const TRUSTING_PORT = randomPort();

const DIALPLAN = [
  '[in]',
  'exten => 1,1,Set(SEEN=${CALLERID(pres)}|${CALLERID(num)})',
  ' same => n,Dial(PJSIP/plain,30)',
  ' same => n,Hangup()',
  'exten => 2,1,Set(SEEN=${CALLERID(pres)}|${CALLERID(num)})',
  ' same => n,Dial(PJSIP/trusting,30)',
  ' same => n,Hangup()',
  'exten => 3,1,Set(CALLERID(pres)=prohib)',
  ' same => n,Set(SEEN=${CALLERID(pres)}|${CALLERID(num)})',
  ' same => n,Dial(PJSIP/trusting,30)',
  ' same => n,Hangup()',
  'exten => 4,1,Set(CALLERID(pres)=prohib)',
  ' same => n,Dial(Local/5@in,30)',
  ' same => n,Hangup()',
  'exten => 5,1,Set(SEEN=${CALLERID(pres)}|${CALLERID(num)})',
  ' same => n,Dial(PJSIP/trusting,30)',
  ' same => n,Hangup()',
  '',
].join('\n');

const callee = (name: string, port: number, extra: Json = {}): Json => ({ context: 'in', allow: 'ulaw', aors: name, send_pai: 'yes', send_rpid: 'yes', ...extra });

const setup: SippServer = sippServerInSuite(!HAVE_SIPP && 'sipp is not installed', () =>
  startSippServer(
    'presentation',
    DIALPLAN,
    {
      endpoint: {
        provider: { context: 'in', allow: 'ulaw', trust_id_inbound: 'yes' },
        phone: { context: 'in', allow: 'ulaw', callerid: '"Front Desk" <1001>' },
        plain: callee('plain', PLAIN_PORT),
        trusting: callee('trusting', TRUSTING_PORT, { trust_id_outbound: 'yes' }),
      },
      aor: {
        plain: { contact: `sip:plain@127.0.0.1:${PLAIN_PORT}` },
        trusting: { contact: `sip:trusting@127.0.0.1:${TRUSTING_PORT}` },
      },
    },
    'presentation-app',
  ),
);

/** A header's value in a traced message (the first of that name), or undefined. */
function header(message: string, name: string): string | undefined {
  const line = message.split(/\r?\n/).find((text) => text.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/**
 * `caller` calls `exten` (refused busy by the SIPp callee on `port`): what the dialplan saw
 * (SEEN), the INVITE the callee received and the events up to SEEN's ChannelVarset.
 */
async function callThrough(caller: string, scenario: string, exten: string, port: number): Promise<{ seen: string; invite: string; events: Json[] }> {
  const callee = sipp('busy-incoming.xml', [setup.target()], { cwd: setup.work, port, trace: true, timeoutMs: 90_000 });
  await callee.listening;
  const call = sippCall(setup, caller, scenario, exten);
  const events: Json[] = [];
  const seen = await explained(call, () => nextEvent(setup.events, (event) => (events.push(event), event.type === 'ChannelVarset' && event.variable === 'SEEN'), 60_000));
  const [calling, called] = await Promise.all([call.done, callee.done]);
  assert.equal(calling.status, 0, `the caller's SIPp: ${calling.output}`);
  assert.equal(called.status, 0, `the callee's SIPp: ${called.output}`);
  const invite = tracedMessages(called, /^INVITE /)[0];
  assert.ok(invite, `the callee received no INVITE: ${called.messages.slice(-2000)}`);
  return { seen: String(seen.value), invite, events };
}

describe('caller presentation over SIP (SIPp)', { skip: !HAVE_SIPP && 'sipp is not installed' }, () => {
  test('a trusted Privacy: id caller is restricted; without trust_id_outbound the callee gets Anonymous and no identity', async () => {
    const { seen, invite } = await callThrough('provider', 'call-withheld-expect-busy.xml', '1', PLAIN_PORT);
    assert.equal(seen, 'prohib_not_screened|+15550001');
    assert.match(header(invite, 'From') ?? '', /^"Anonymous" <sip:anonymous@anonymous\.invalid>;tag=/);
    assert.equal(header(invite, 'P-Asserted-Identity'), undefined, invite);
    assert.equal(header(invite, 'Remote-Party-ID'), undefined, invite);
    assert.equal(header(invite, 'Privacy'), undefined, invite);
  });

  test('with trust_id_outbound the callee gets Anonymous in From, the caller in P-Asserted-Identity with Privacy: id and in Remote-Party-ID privacy=full', async () => {
    const { seen, invite } = await callThrough('provider', 'call-withheld-expect-busy.xml', '2', TRUSTING_PORT);
    assert.equal(seen, 'prohib_not_screened|+15550001');
    assert.match(header(invite, 'From') ?? '', /^"Anonymous" <sip:anonymous@anonymous\.invalid>;tag=/);
    assert.match(header(invite, 'P-Asserted-Identity') ?? '', /^"Withheld Caller" <sip:\+15550001@[^>]+>$/, invite);
    assert.equal(header(invite, 'Privacy'), 'id', invite);
    assert.match(header(invite, 'Remote-Party-ID') ?? '', /^"Withheld Caller" <sip:\+15550001@[^>]+>;party=calling;privacy=full;screen=no$/, invite);
  });

  test('Set(CALLERID(pres)=prohib) then Dial: the callee gets Anonymous, and the id with Privacy: id under trust_id_outbound', async () => {
    const { seen, invite } = await callThrough('phone', 'call-expect-busy.xml', '3', TRUSTING_PORT);
    assert.equal(seen, 'prohib|1001');
    assert.match(header(invite, 'From') ?? '', /^"Anonymous" <sip:anonymous@anonymous\.invalid>;tag=/);
    assert.match(header(invite, 'P-Asserted-Identity') ?? '', /^"Front Desk" <sip:1001@[^>]+>$/, invite);
    assert.equal(header(invite, 'Privacy'), 'id', invite);
    assert.match(header(invite, 'Remote-Party-ID') ?? '', /;privacy=full;screen=no$/, invite);
  });

  test('through a Local pair: the private caller is private on ;2 and at the SIP callee', async () => {
    const { seen, invite, events } = await callThrough('phone', 'call-expect-busy.xml', '4', TRUSTING_PORT);
    assert.equal(seen, 'prohib|1001');
    // ;2 takes ;1's connected party as its caller: ARI's ChannelCallerId says it is prohibited.
    const callerId = events.find((event) => event.type === 'ChannelCallerId' && /^Local\/5@in-.*;2$/.test(event.channel?.name ?? ''));
    assert.ok(callerId, `no ChannelCallerId on ;2: ${events.map((event) => `${event.type} ${event.channel?.name ?? ''}`).join(', ')}`);
    assert.deepEqual([callerId.caller_presentation, callerId.caller_presentation_txt], [35, 'Presentation Prohibited, Network Number']);
    assert.match(header(invite, 'From') ?? '', /^"Anonymous" <sip:anonymous@anonymous\.invalid>;tag=/);
    assert.match(header(invite, 'P-Asserted-Identity') ?? '', /^"Front Desk" <sip:1001@[^>]+>$/, invite);
    assert.equal(header(invite, 'Privacy'), 'id', invite);
  });
});
