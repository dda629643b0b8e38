// The notifier's pure pieces (no server): the NOTIFY bodies of the dialog (RFC 4235), presence
// (PIDF, RFC 3863) and message-summary (RFC 3842) packages, with every peer- or config-chosen
// text escaped and bounded; and the SUBSCRIBE decisions of RFC 6665 (Event, Accept, Expires,
// Subscription-State). The XML is checked by parsing it back with a small strict reader.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dialogInfoXml, messageSummaryBody, pidfXml, xmlEscape } from '../../src/sip/event-bodies.ts';
import { acceptsType, parseEventHeader, requestedExpiry, subscriptionState } from '../../src/sip/event-notify.ts';
import type { SipRequest } from '../../src/sip/message.ts';
import { parseMessage } from '../../src/sip/parser.ts';
import { shownState } from '../../src/channels/pjsip/subscriptions/packages.ts';

function subscribe(extra: string[]): SipRequest {
  const text = [
    'SUBSCRIBE sip:100@192.0.2.1 SIP/2.0',
    'Via: SIP/2.0/UDP 10.0.0.9:5999;branch=z9hG4bKabc',
    'From: <sip:alice@192.0.2.1>;tag=far',
    'To: <sip:100@192.0.2.1>',
    'Call-ID: sub-1',
    'CSeq: 1 SUBSCRIBE',
    'Contact: <sip:alice@10.0.0.9:5999>',
    ...extra,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  const parsed = parseMessage(text);
  assert.ok(parsed.ok, 'parses');
  return parsed.message as SipRequest;
}

interface XmlNode {
  name: string;
  attributes: Record<string, string>;
  children: XmlNode[];
  text: string;
}

/** Enough of XML for these documents: a prolog, elements, attributes in double quotes, text and the five entities. */
function parseXml(text: string): XmlNode {
  const body = text.replace(/^<\?xml[^?]*\?>\s*/, '');
  const decode = (value: string) =>
    value.replace(/&(lt|gt|quot|amp|apos|#13|#10);/g, (_m, name: string) => ({ lt: '<', gt: '>', quot: '"', amp: '&', apos: "'", '#13': '\r', '#10': '\n' })[name]!);
  const stack: XmlNode[] = [{ name: '#root', attributes: {}, children: [], text: '' }];
  const token = /<\/([\w:-]+)>|<([\w:-]+)((?:\s+[\w:+.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/g;
  let match: RegExpExecArray | null;
  let consumed = 0;
  while ((match = token.exec(body))) {
    assert.equal(match.index, consumed, `well-formed at ${consumed}: ${body.slice(consumed, consumed + 40)}`);
    consumed = token.lastIndex;
    const top = stack[stack.length - 1];
    if (match[1]) {
      assert.equal(top.name, match[1], 'closing tag matches');
      stack.pop();
    } else if (match[2]) {
      const attributes: Record<string, string> = {};
      for (const [, name, value] of match[3].matchAll(/([\w:+.-]+)="([^"]*)"/g)) attributes[name] = decode(value);
      const node: XmlNode = { name: match[2], attributes, children: [], text: '' };
      top.children.push(node);
      if (!match[4]) stack.push(node);
    } else {
      top.text += decode(match[5]).trim();
    }
  }
  assert.equal(consumed, body.length, 'the whole document was read');
  assert.equal(stack.length, 1, 'every element closed');
  assert.equal(stack[0].children.length, 1, 'one root element');
  return stack[0].children[0];
}

const child = (node: XmlNode, name: string): XmlNode => {
  const found = node.children.find((candidate) => candidate.name === name);
  assert.ok(found, `<${name}> in <${node.name}>`);
  return found;
};

describe('NOTIFY bodies', () => {
  it('dialog-info: full state, version, entity; an idle extension is a terminated dialog', () => {
    const root = parseXml(dialogInfoXml({ entity: 'sip:100@pbx', version: 0, dialogId: '100', state: 'terminated' }));
    assert.equal(root.name, 'dialog-info');
    assert.deepEqual(root.attributes, { xmlns: 'urn:ietf:params:xml:ns:dialog-info', version: '0', state: 'full', entity: 'sip:100@pbx' });
    const dialog = child(root, 'dialog');
    assert.deepEqual(dialog.attributes, { id: '100' });
    assert.equal(child(dialog, 'state').text, 'terminated');
  });

  it('dialog-info: ringing is an early dialog with direction recipient; on hold carries +sip.rendering=no', () => {
    const ringing = child(parseXml(dialogInfoXml({ entity: 'sip:100@pbx', version: 3, dialogId: '100', state: 'early', ringing: true })), 'dialog');
    assert.equal(ringing.attributes.direction, 'recipient');
    assert.equal(child(ringing, 'state').text, 'early');
    const held = child(parseXml(dialogInfoXml({ entity: 'sip:100@pbx', version: 4, dialogId: '100', state: 'confirmed', onHold: true })), 'dialog');
    const param = child(child(child(held, 'local'), 'target'), 'param');
    assert.deepEqual(param.attributes, { pname: '+sip.rendering', pvalue: 'no' });
  });

  it('dialog-info: a ringing extension names its caller as the remote participant (identity, display, target)', () => {
    const dialog = child(parseXml(dialogInfoXml({ entity: 'sip:100@pbx', version: 1, dialogId: '100', state: 'early', ringing: true, remote: { uri: 'sip:200@pbx', display: 'Bob & Co' } })), 'dialog');
    const remote = child(dialog, 'remote');
    assert.equal(child(remote, 'identity').text, 'sip:200@pbx');
    assert.equal(child(remote, 'identity').attributes.display, 'Bob & Co');
    assert.equal(child(remote, 'target').attributes.uri, 'sip:200@pbx');
    assert.deepEqual(dialog.children.map((node) => node.name), ['state', 'remote'], 'state first, as RFC 4235\'s schema orders them');
  });

  it('PIDF: basic open or closed, the note, the contact; one tuple with a valid id', () => {
    const root = parseXml(pidfXml({ entity: 'sip:100@pbx', tupleId: '100', open: true, note: 'On the phone', contact: 'sip:bob@pbx' }));
    assert.equal(root.name, 'presence');
    assert.equal(root.attributes.xmlns, 'urn:ietf:params:xml:ns:pidf');
    const tuple = child(root, 'tuple');
    assert.match(tuple.attributes.id, /^[A-Za-z_][\w.-]*$/, 'an XML ID');
    assert.equal(child(child(tuple, 'status'), 'basic').text, 'open');
    assert.equal(child(tuple, 'contact').text, 'sip:bob@pbx');
    assert.equal(child(root, 'note').text, 'On the phone');
    const closed = parseXml(pidfXml({ entity: 'sip:100@pbx', tupleId: 'alice', open: false, note: 'Unavailable' }));
    assert.equal(child(child(child(closed, 'tuple'), 'status'), 'basic').text, 'closed');
  });

  it('escapes markup, quotes and line breaks from names, and bounds their length', () => {
    const hostile = 'sip:"><evil attr="x"/>&\r\n@pbx';
    const root = parseXml(dialogInfoXml({ entity: hostile, version: 1, dialogId: '<100>&', state: 'confirmed' }));
    assert.equal(root.attributes.entity, hostile);
    assert.equal(child(root, 'dialog').attributes.id, '<100>&');
    const presence = parseXml(pidfXml({ entity: 'sip:x@pbx', tupleId: '1"2', open: true, note: '</note><x>', contact: '<c>' }));
    assert.equal(child(presence, 'note').text, '</note><x>');
    assert.ok(xmlEscape('a'.repeat(10_000)).length <= 512);
    assert.equal(xmlEscape('a\u0000b\u0007c'), 'abc', 'controls dropped');
  });

  it('message-summary: Messages-Waiting, the account when given, new/old counts, CRLF lines', () => {
    assert.equal(messageSummaryBody({ newMessages: 2, oldMessages: 5, account: 'sip:*97@pbx' }), 'Messages-Waiting: yes\r\nMessage-Account: sip:*97@pbx\r\nVoice-Message: 2/5 (0/0)\r\n');
    assert.equal(messageSummaryBody({ newMessages: 0, oldMessages: 3 }), 'Messages-Waiting: no\r\nVoice-Message: 0/3 (0/0)\r\n');
    assert.equal(messageSummaryBody({ newMessages: -4, oldMessages: 1.7, account: 'sip:a@b\r\nX: y' }), 'Messages-Waiting: no\r\nMessage-Account: sip:a@bX: y\r\nVoice-Message: 0/1 (0/0)\r\n');
  });

  it('extension states are shown as Asterisk shows them', () => {
    assert.deepEqual(shownState('NOT_INUSE'), { dialog: 'terminated', open: true, note: 'Ready' });
    assert.deepEqual(shownState('INUSE'), { dialog: 'confirmed', open: true, note: 'On the phone' });
    assert.deepEqual(shownState('RINGING'), { dialog: 'early', ringing: true, open: true, note: 'Ringing' });
    assert.deepEqual(shownState('ONHOLD'), { dialog: 'confirmed', onHold: true, open: true, note: 'On hold' });
    assert.deepEqual(shownState('UNAVAILABLE'), { dialog: 'terminated', open: false, note: 'Unavailable' });
    assert.deepEqual(shownState('RINGINUSE'), { dialog: 'confirmed', open: true, note: 'Ringing' });
    assert.deepEqual(shownState('RINGINUSE', true), { dialog: 'early', ringing: true, open: true, note: 'Ringing' }, 'notify_early_inuse_ringing=yes');
  });
});

describe('SUBSCRIBE decisions', () => {
  it('Event: the package in lower case and its id; missing or malformed is undefined', () => {
    assert.deepEqual(parseEventHeader(subscribe(['Event: Dialog;id=42'])), { package: 'dialog', id: '42' });
    assert.deepEqual(parseEventHeader(subscribe(['o: message-summary'])), { package: 'message-summary' });
    assert.equal(parseEventHeader(subscribe([])), undefined);
    assert.equal(parseEventHeader(subscribe(['Event: bad package'])), undefined);
    assert.equal(parseEventHeader(subscribe([`Event: ${'x'.repeat(300)}`])), undefined);
  });

  it('Accept: absent accepts the package type; ranges and wildcards match; others do not', () => {
    assert.equal(acceptsType(subscribe([]), 'application/pidf+xml'), true);
    assert.equal(acceptsType(subscribe(['Accept: application/pidf+xml;q=1, application/xpidf+xml']), 'application/pidf+xml'), true);
    assert.equal(acceptsType(subscribe(['Accept: application/*']), 'application/dialog-info+xml'), true);
    assert.equal(acceptsType(subscribe(['Accept: application/xpidf+xml']), 'application/pidf+xml'), false);
  });

  it('Expires: a number, the default when absent, 0 as asked (the parser refuses words)', () => {
    assert.equal(requestedExpiry(subscribe(['Expires: 600'])), 600);
    assert.equal(requestedExpiry(subscribe([])), 'default');
    assert.equal(requestedExpiry(subscribe(['Expires: 0'])), 0);
  });

  it('Subscription-State: active with the seconds left, terminated with a reason', () => {
    assert.equal(subscriptionState({ kind: 'active', expires: 599.6 }), 'active;expires=599');
    assert.equal(subscriptionState({ kind: 'terminated', reason: 'timeout' }), 'terminated;reason=timeout');
  });
});
