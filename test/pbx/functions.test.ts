// Every dialplan function through the substitution a dialplan step gets (`${NAME(args)}`), on a
// channel of a real core: its astdb on SQLite, its dialplan with hints, its device states.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { Core } from '../../src/control/core.ts';
import type { ExtensionStateChange } from '../../src/core/extension-states.ts';
import {
  isUnprovidedDialplanFunction,
  readChannelFunction,
  writeChannelFunction,
} from '../../src/pbx/function-registry.ts';
import { MAX_VARIABLE_VALUE_LENGTH } from '../../src/core/variable-limits.ts';
import { cpuMs } from '../helpers/cpu-time.ts';

const DIALPLAN = `
[funcs]
exten => 100,hint,Custom:desk100&Custom:phone100
exten => 100,1,NoOp()
 same => n(second),NoOp()
exten => 200,1,NoOp()

[default]
exten => 300,hint,Custom:desk300
exten => 300,1,NoOp()
`;

let dir: string;
let core: Core;
let channel: Channel;
let other: Channel;
let serial = 0;

/** What a dialplan step's `text` becomes on `on` (default: the test channel). */
const sub = (text: string, on: Channel = channel): string => core.pbx.substitute(on, text);

function newChannel(): Channel {
  serial++;
  return core.channels.create({
    name: `Test/fn-${String(serial).padStart(8, '0')}`,
    technology: 'Test',
    direction: 'inbound',
    state: 'Up',
    caller: { name: 'Alice', number: '2001' },
    location: { context: 'funcs', exten: '100', priority: 2 },
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-functions-'));
  const file = join(dir, 'extensions.conf');
  writeFileSync(file, DIALPLAN);
  const config = loadConfig({ path: null, env: {}, overrides: { dirs: { data: dir }, logging: { console: false }, dialplan: { file } } });
  core = new Core({ config, log: pino({ level: 'silent' }), manualClock: true });
  await core.start();
  channel = newChannel();
  other = newChannel();
  channel.setVariable('PARTS', 'a-b-c-d');
  channel.setVariable('PIPES', 'a|b|a|c');
  channel.setVariable('PHONE', '555-123-4567');
  channel.setVariable('EMPTY', '');
  channel.setVariable('COMMAS', 'x,y,z');
});

after(async () => {
  await core.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** [text with ${...}, expected substitution] */
type Row = readonly [string, string];

function table(name: string, rows: readonly Row[]): void {
  test(name, () => {
    for (const [text, expected] of rows) assert.equal(sub(text), expected, text);
  });
}

describe('logic functions', () => {
  table('IF, ISNULL, EXISTS', [
    ['${IF(1?yes:no)}', 'yes'],
    ['${IF(0?yes:no)}', 'no'],
    ['${IF(?yes:no)}', ''],
    ['${IF(1?"a:b":c)}', 'a:b'],
    ['${IF(0?a:b:c)}', 'b:c'],
    ['${IF(abc?yes:no)}', 'yes'],
    ['${IF(00?yes:no)}', 'no'],
    ['${IF(1?yes)}', 'yes'],
    ['${IF(0?yes)}', ''],
    ['${IF($[2 > 1]?"quoted":no)}', 'quoted'],
    ['${IF(${ISNULL(${EMPTY})}?empty:full)}', 'empty'],
    ['${IF(no question mark)}', ''],
    ['${ISNULL()}', '1'],
    ['${ISNULL(x)}', '0'],
    ['${EXISTS()}', '0'],
    ['${EXISTS(x)}', '1'],
  ]);

  test('IFTIME against the current month and another one', () => {
    const months = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
    const now = new Date();
    // Away from a month boundary so the clock cannot move under the test.
    const month = now.getUTCMonth();
    assert.equal(sub(`\${IFTIME(*,*,*,${months[month]},UTC?open:closed)}`), 'open');
    assert.equal(sub(`\${IFTIME(*,*,*,${months[(month + 6) % 12]},UTC?open:closed)}`), 'closed');
    assert.equal(sub('${IFTIME(*,*,*,*?open:closed)}'), 'open');
    assert.equal(sub('${IFTIME(00:00-23:59,mon-sun,1-31,jan-dec?open:closed)}'), 'open');
    assert.equal(sub('${IFTIME(25:00-26:00,*,*,*?open:closed)}'), '', 'a bad time reads as nothing');
    assert.equal(sub('${IFTIME(*,*,*,*,Not/AZone?open:closed)}'), '');
  });

  test('RAND stays within its bounds', () => {
    assert.equal(sub('${RAND(5,5)}'), '5');
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add(sub('${RAND(1,3)}'));
    assert.deepEqual([...seen].sort(), ['1', '2', '3']);
    const big = Number(sub('${RAND()}'));
    assert.ok(Number.isInteger(big) && big >= 0 && big <= 2147483647);
  });

  table('MATH', [
    ['${MATH(3*8)}', '24.000000'],
    ['${MATH(5/2)}', '2.500000'],
    ['${MATH(10/3,i)}', '3'],
    ['${MATH(255+0,h)}', 'ff'],
    ['${MATH(65+0,c)}', 'A'],
    ['${MATH(2^10,int)}', '1024'],
    ['${MATH(7%3,i)}', '1'],
    ['${MATH(1<<4,i)}', '16'],
    ['${MATH(256>>4,i)}', '16'],
    ['${MATH(-5+3)}', '-2.000000'],
    ['${MATH(5-7,i)}', '-2'],
    ['${MATH(3<5)}', 'TRUE'],
    ['${MATH(3>=5)}', 'FALSE'],
    ['${MATH(4==4)}', 'TRUE'],
    ['${MATH(170 AND 63,i)}', '42'],
    ['${MATH(170AND63,i)}', '42'],
    ['${MATH(1/0)}', '0.000000'],
    ['${MATH(-1,i)}', ''],
    ['${MATH(abc+1)}', ''],
    ['${MATH(5)}', ''],
    ['${MATH(2*3,bogus)}', ''],
  ]);
});

describe('string functions', () => {
  table('LEN, CUT, FIELDQTY, FIELDNUM, LISTFILTER', [
    ['${LEN(hello)}', '5'],
    ['${LEN()}', '0'],
    ['${CUT(PARTS,-,2)}', 'b'],
    ['${CUT(PARTS,-,2-3)}', 'b-c'],
    ['${CUT(PARTS,-,3-)}', 'c-d'],
    ['${CUT(PARTS,-,-2)}', 'a-b'],
    ['${CUT(PARTS,-,1&4)}', 'a-d'],
    ['${CUT(PARTS,,2)}', 'b'],
    ['${CUT(COMMAS,\\,,2)}', 'y'],
    ['${CUT(PARTS,-,0)}', ''],
    ['${CUT(UNSET,-,1)}', ''],
    ['${FIELDQTY(PARTS,-)}', '4'],
    ['${FIELDQTY(EMPTY,-)}', '0'],
    ['${FIELDNUM(PARTS,-,c)}', '3'],
    ['${FIELDNUM(PARTS,-,z)}', '0'],
    ['${LISTFILTER(PIPES,|,a)}', 'b|c'],
  ]);

  table('REGEX, REPLACE, FILTER, TOUPPER, TOLOWER', [
    ['${REGEX("^[0-9]+$" 12345)}', '1'],
    ['${REGEX("^[0-9]+$" 12a45)}', '0'],
    ['${REGEX("[[:digit:]]{3}" ab123)}', '1'],
    ['${REGEX("^5551" ${PHONE})}', '0'],
    ['${REGEX("^555-" ${PHONE})}', '1'],
    ['${REGEX(no quotes)}', ''],
    ['${REGEX("([" x)}', ''],
    ['${REPLACE(PHONE,-)}', '5551234567'],
    ['${REPLACE(PHONE,-,.)}', '555.123.4567'],
    ['${FILTER(0-9,+1 (555) 123)}', '1555123'],
    ['${FILTER(a-c,abcdef)}', 'abc'],
    ['${FILTER(\\x41B,ABCA)}', 'ABA'],
    ['${TOUPPER(abc)}', 'ABC'],
    ['${TOLOWER(ABC)}', 'abc'],
  ]);

  test('REGEX cannot stall the server on a catastrophic pattern', () => {
    channel.setVariable('EVIL', `${'a'.repeat(5000)}b`);
    const ms = cpuMs(() => {
      assert.equal(sub('${REGEX("^(a+)+$" ${EVIL})}'), '0');
      assert.equal(sub('$[${EVIL} =~ "(a|aa)+$"]'), '');
    });
    assert.ok(ms < 1000, `matched in linear time (${ms} ms of CPU)`);
    assert.equal(sub(`\${REGEX("${'x'.repeat(600)}" x)}`), '', 'a pattern over 512 characters is refused');
  });

  table('SPRINTF', [
    ['${SPRINTF(%05.2f,3.14159)}', '03.14'],
    ['${SPRINTF(%-5s|,ab)}', 'ab   |'],
    ['${SPRINTF(%x/%X/%o,255,255,8)}', 'ff/FF/10'],
    ['${SPRINTF(%+d %d,5,-7)}', '+5 -7'],
    ['${SPRINTF(%03d,7)}', '007'],
    ['${SPRINTF(%c,65)}', 'A'],
    ['${SPRINTF(%e,12345.678)}', '1.234568e+04'],
    ['${SPRINTF(%g|%g|%g,0.0001,100000,1000000)}', '0.0001|100000|1e+06'],
    ['${SPRINTF(%.3s,abcdef)}', 'abc'],
    ['${SPRINTF(100%%)}', '100%'],
    ['${SPRINTF(%d,abc)}', '0'],
  ]);

  test('SPRINTF output is capped at the variable value limit', () => {
    const format = '%4096d'.repeat(40);
    const result = readChannelFunction(channel, 'SPRINTF', `${format},1`);
    assert.equal(result?.length, MAX_VARIABLE_VALUE_LENGTH);
    assert.equal(sub('${SPRINTF(%999999999d,1)}').length, 4096, 'a width is clamped');
  });

  table('QUOTE, CSV_QUOTE, BASE64, URI', [
    ['${QUOTE(say "hi" \\ bye)}', '"say \\"hi\\" \\\\ bye"'],
    ['${CSV_QUOTE(a"b)}', '"a""b"'],
    ['${BASE64_ENCODE(hello)}', 'aGVsbG8='],
    ['${BASE64_DECODE(aGVsbG8=)}', 'hello'],
    ['${BASE64_DECODE(${BASE64_ENCODE(héllo wörld)})}', 'héllo wörld'],
    ['${URIENCODE(a b&c/d)}', 'a%20b%26c%2Fd'],
    ['${URIDECODE(a%20b%26c)}', 'a b&c'],
    ['${URIDECODE(100%25 and 5%)}', '100% and 5%'],
  ]);
});

describe('time functions', () => {
  table('STRFTIME and STRPTIME', [
    ['${STRFTIME(0,UTC,%Y-%m-%d %H:%M:%S)}', '1970-01-01 00:00:00'],
    ['${STRFTIME(1700000000,America/New_York,%F %T %z)}', '2023-11-14 17:13:20 -0500'],
    ['${STRFTIME(1700000000,Europe/Paris,%A %d %B %Y %I:%M %p)}', 'Tuesday 14 November 2023 11:13 PM'],
    ['${STRFTIME(1.25,UTC,%S.%3q)}', '01.250'],
    ['${STRFTIME(1700000000,UTC,%s %j %u %w)}', '1700000000 318 2 2'],
    ['${STRFTIME(1700000000,UTC)}', 'Tue Nov 14 22:13:20 2023'],
    ['${STRFTIME(1700000000,Bad/Zone,%F)}', ''],
    ['${STRFTIME(1e300,UTC,%F)}', ''],
    ['${STRPTIME(2023-11-14 22:13:20,UTC,%Y-%m-%d %H:%M:%S)}', '1700000000'],
    ['${STRPTIME(2023-11-14 17:13:20,America/New_York,%Y-%m-%d %H:%M:%S)}', '1700000000'],
    ['${STRPTIME(14 Nov 2023 10:13 PM,UTC,%d %b %Y %I:%M %p)}', '1699999980'],
    ['${STRPTIME(not a date,UTC,%Y-%m-%d)}', ''],
  ]);

  test('EPOCH is now', () => {
    const epoch = Number(sub('${EPOCH}'));
    assert.ok(Math.abs(epoch - Date.now() / 1000) < 5);
  });
});

describe('variable functions', () => {
  test('HASH, HASHKEYS and ARRAY', () => {
    writeChannelFunction(channel, 'HASH', 'person,name', 'Bob');
    writeChannelFunction(channel, 'HASH', 'person,city', 'Paris');
    assert.equal(sub('${HASH(person,name)}'), 'Bob');
    assert.equal(sub('${HASHKEYS(person)}'), 'name,city');
    assert.equal(sub('${HASH(person)}'), 'Bob,Paris');
    assert.equal(sub('${HASH(person,missing)}'), '');
    writeChannelFunction(channel, 'ARRAY', 'FIRST,SECOND,THIRD', 'one,two');
    assert.equal(sub('${FIRST}|${SECOND}|${THIRD}'), 'one|two|');
    assert.equal(sub('${~ODBCFIELDS~}'), 'name,city', 'a whole-hash read leaves its key order');
    writeChannelFunction(channel, 'HASH', 'copy', 'Carol,Rome');
    assert.equal(sub('${HASH(copy,name)}/${HASH(copy,city)}'), 'Carol/Rome', 'the single-argument write takes those keys');
    writeChannelFunction(channel, 'HASH', '_inherited,key', 'v');
    assert.equal(channel.getVariable('_~HASH~inherited~key~'), 'v');
    assert.equal(sub('${HASH(inherited,key)}|${HASHKEYS(inherited)}'), 'v|key');
    channel.setVariable('~ODBCFIELDS~', undefined);
    assert.throws(() => writeChannelFunction(channel, 'HASH', 'person', 'x'), /ODBCFIELDS/);
  });

  test('SET, IMPORT, INC and DEC', () => {
    assert.equal(sub('${SET(COUNTER=41)}'), '41');
    assert.equal(sub('${INC(COUNTER)}|${COUNTER}'), '42|42');
    assert.equal(sub('${DEC(COUNTER)}|${DEC(COUNTER)}'), '41|40');
    assert.equal(sub('${INC(PARTS)}'), '', 'not a number');
    assert.equal(sub(`\${IMPORT(${channel.name},COUNTER)}`, other), '40');
    assert.equal(sub('${IMPORT(Test/nobody-1,COUNTER)}', other), '');
  });

  test('GLOBAL is the server-wide variable table', () => {
    writeChannelFunction(channel, 'GLOBAL', 'FN_GLOBAL', 'shared-value');
    assert.equal(core.globalVars.get('FN_GLOBAL'), 'shared-value');
    assert.equal(sub('${GLOBAL(FN_GLOBAL)}|${FN_GLOBAL}', other), 'shared-value|shared-value');
  });

  test('SHARED is readable and writable from another channel', () => {
    writeChannelFunction(channel, 'SHARED', 'flag', 'up');
    assert.equal(sub('${SHARED(flag)}'), 'up');
    assert.equal(sub(`\${SHARED(flag,${channel.name})}`, other), 'up');
    assert.equal(sub('${SHARED(flag)}', other), '', "the other channel's own SHARED is separate");
    writeChannelFunction(other, 'SHARED', `flag,${channel.name}`, 'changed');
    assert.equal(sub('${SHARED(flag)}'), 'changed');
    assert.throws(() => writeChannelFunction(other, 'SHARED', 'flag,Test/nonexistent-1', 'x'), /no such channel/);
  });
});

describe('channel functions', () => {
  test('CALLERID fields, read and written', () => {
    assert.equal(sub('${CALLERID(num)}|${CALLERID(name)}|${CALLERID(all)}'), '2001|Alice|"Alice" <2001>');
    assert.equal(sub('${CALLERID(ani)}|${CALLERID(pres)}|${CALLERID(num-valid)}'), '2001|allowed_not_screened|1');
    writeChannelFunction(channel, 'CALLERID', 'all', '"Bob Smith" <3003>');
    writeChannelFunction(channel, 'CALLERID', 'rdnis', '4004');
    writeChannelFunction(channel, 'CALLERID', 'dnid', '5005');
    assert.equal(sub('${CALLERID(number)}/${CALLERID(name)}/${CALLERID(rdnis)}/${CALLERID(dnid)}'), '3003/Bob Smith/4004/5005');
    assert.equal(channel.snapshot().caller_rdnis, '4004');
    assert.equal(sub('${CALLERIDNUM}|${RDNIS}|${DNID}'), '3003|4004|5005');
    assert.equal(readChannelFunction(channel, 'CALLERID', 'bogus'), undefined);
    assert.throws(() => writeChannelFunction(channel, 'CALLERID', 'bogus', '1'), /Unknown CALLERID field/);
  });

  test('CALLERID and CONNECTEDLINE presentation: names and numbers written, combined as func_callerid, bad values refused and kept', () => {
    // A connected line never set has no valid name or number: unavailable, as ast_party_id_presentation.
    assert.equal(sub('${CALLERID(pres)}|${CALLERID(name-pres)}|${CALLERID(num-pres)}|${CONNECTEDLINE(pres)}|${CONNECTEDLINE(num-pres)}'), 'allowed_not_screened|allowed_not_screened|allowed_not_screened|unavailable|allowed_not_screened');
    const anonymous = core.channels.create({
      name: 'Test/fn-no-caller-id', technology: 'Test', direction: 'inbound', state: 'Up',
      caller: { name: '', number: '' }, location: { context: 'funcs', exten: '100', priority: 2 },
    });
    assert.equal(sub('${CALLERID(pres)}|${CALLERID(num-pres)}|${CALLERID(name-valid)}', anonymous), 'unavailable|allowed_not_screened|0');
    writeChannelFunction(anonymous, 'CALLERID', 'name', 'Dora');
    assert.equal(sub('${CALLERID(pres)}', anonymous), 'allowed_not_screened', 'a valid name with no number: the name decides, unscreened');
    anonymous.hangup();
    writeChannelFunction(channel, 'CALLERID', 'pres', 'PROHIB');
    assert.equal(sub('${CALLERID(pres)}|${CALLERID(name-pres)}|${CALLERID(num-pres)}'), 'prohib|prohib|prohib');
    // The more private part decides; the number's screening is kept.
    writeChannelFunction(channel, 'CALLERID', 'num-pres', 'allowed_passed_screen');
    assert.equal(sub('${CALLERID(pres)}|${CALLERID(num-pres)}'), 'prohib_passed_screen|allowed_passed_screen');
    writeChannelFunction(channel, 'CALLERID', 'name-pres', '0');
    assert.equal(sub('${CALLERID(pres)}'), 'allowed_passed_screen');
    writeChannelFunction(channel, 'CALLERID', 'pres', 'unavailable');
    assert.equal(sub('${CALLERID(pres)}'), 'unavailable');
    // 99 has no name; its restriction bits are no known one, which combines as unavailable.
    writeChannelFunction(channel, 'CALLERID', 'presentation', '99');
    assert.equal(sub('${CALLERID(pres)}'), 'unavailable');
    assert.throws(() => writeChannelFunction(channel, 'CALLERID', 'pres', 'secret'), /Unknown CALLERID presentation 'secret', value unchanged/);
    assert.equal(sub('${CALLERID(num-pres)}'), 'unknown');
    writeChannelFunction(channel, 'CALLERID', 'pres', 'allowed_not_screened');
    writeChannelFunction(channel, 'CONNECTEDLINE', 'pres', 'prohib_not_screened');
    assert.equal(sub('${CONNECTEDLINE(pres)}|${CONNECTEDLINE(name-pres)}'), 'unavailable|prohib_not_screened', 'still no valid part');
    writeChannelFunction(channel, 'CONNECTEDLINE', 'name', 'Carol');
    assert.equal(sub('${CONNECTEDLINE(pres)}|${CALLERID(pres)}'), 'prohib_not_screened|allowed_not_screened');
    writeChannelFunction(channel, 'CONNECTEDLINE', 'name', '');
    writeChannelFunction(channel, 'CONNECTEDLINE', 'pres', 'allowed_not_screened');
  });

  test('REDIRECTING: parties, reason and count read and written as func_callerid; CALLERID(rdnis) is its from number', () => {
    writeChannelFunction(channel, 'REDIRECTING', 'from-all', '"Desk" <6006>');
    writeChannelFunction(channel, 'REDIRECTING', 'to-num', '7007');
    writeChannelFunction(channel, 'REDIRECTING', 'orig-name', 'First');
    writeChannelFunction(channel, 'REDIRECTING', 'reason', 'unconditional');
    writeChannelFunction(channel, 'REDIRECTING', 'orig-reason,i', '2');
    writeChannelFunction(channel, 'REDIRECTING', 'count', '3');
    assert.equal(sub('${REDIRECTING(from-name)}|${REDIRECTING(from-num)}|${REDIRECTING(to-all)}|${REDIRECTING(orig-name)}'), 'Desk|6006|7007|First');
    assert.equal(sub('${REDIRECTING(reason)}|${REDIRECTING(orig-reason)}|${REDIRECTING(count)}|${REDIRECTING(priv-from-num)}|${CALLERID(rdnis)}'), 'cfu|cfnr|3||6006');
    assert.equal(channel.snapshot().caller_rdnis, '6006');
    writeChannelFunction(channel, 'REDIRECTING', 'reason', 'gone fishing');
    assert.equal(sub('${REDIRECTING(reason)}'), 'gone fishing');
    assert.throws(() => writeChannelFunction(channel, 'REDIRECTING', 'count', 'many'), /Unknown redirecting count/);
    assert.throws(() => writeChannelFunction(channel, 'REDIRECTING', 'bogus-num', '1'), /Unknown redirecting data type/);
    assert.equal(readChannelFunction(channel, 'REDIRECTING', 'bogus'), undefined);
  });

  test('CONNECTEDLINE and CHANNEL', () => {
    writeChannelFunction(channel, 'CONNECTEDLINE', 'all', '"Desk" <100>');
    assert.equal(sub('${CONNECTEDLINE(name)}|${CONNECTEDLINE(num)}'), 'Desk|100');
    assert.equal(sub('${CHANNEL(exten)}@${CHANNEL(context)}:${CHANNEL(priority)}|${CHANNEL(channeltype)}|${CHANNEL(state)}'), '100@funcs:2|Test|Up');
    assert.equal(sub('${EXTEN}|${CONTEXT}|${PRIORITY}|${CHANNEL}|${UNIQUEID}'), `100|funcs|2|${channel.name}|${channel.id}`);
    writeChannelFunction(channel, 'CHANNEL', 'language', 'fr');
    assert.equal(sub('${CHANNEL(language)}|${LANGUAGE}'), 'fr|fr');
    assert.throws(() => writeChannelFunction(channel, 'CHANNEL', 'name', 'x'), /cannot be written/);
  });

  test('HANGUPCAUSE of a channel of the call that ended', () => {
    const leg = core.channels.create({ name: 'Test/leg-00000001', technology: 'Test', direction: 'outbound', state: 'Up', linkedId: channel.linkedId });
    assert.equal(sub('${HANGUPCAUSE}', leg), '0');
    leg.hangup(17);
    assert.equal(sub('${HANGUPCAUSE(Test/leg-00000001,ast)}|${HANGUPCAUSE(Test/leg-00000001,tech)}'), '17|User busy');
    assert.ok(sub('${HANGUPCAUSE_KEYS()}').split(',').includes('Test/leg-00000001'));
    assert.equal(sub('${HANGUPCAUSE(Test/never-1,ast)}'), '');
  });

  test('TALK_DETECT is writable and not readable', () => {
    writeChannelFunction(channel, 'TALK_DETECT', 'set', '');
    assert.equal(core.talkDetection.isEnabled(channel), true);
    writeChannelFunction(channel, 'TALK_DETECT', 'remove', '');
    assert.equal(core.talkDetection.isEnabled(channel), false);
    assert.equal(readChannelFunction(channel, 'TALK_DETECT', 'set'), undefined);
  });
});

describe('state functions', () => {
  test('DEVICE_STATE writes Custom: devices; EXTENSION_STATE follows the hint', () => {
    const changes: ExtensionStateChange[] = [];
    core.extensionStates.on('change', (change) => changes.push(change));
    assert.equal(sub('${EXTENSION_STATE(100@funcs)}'), 'NOT_INUSE', 'unknown devices count as not in use');
    writeChannelFunction(channel, 'DEVICE_STATE', 'Custom:desk100', 'INUSE');
    assert.equal(sub('${DEVICE_STATE(Custom:desk100)}'), 'INUSE');
    assert.equal(sub('${EXTENSION_STATE(100@funcs)}'), 'INUSE');
    writeChannelFunction(channel, 'DEVICE_STATE', 'Custom:phone100', 'RINGING');
    assert.equal(sub('${EXTENSION_STATE(100@funcs)}'), 'RINGINUSE');
    writeChannelFunction(channel, 'DEVICE_STATE', 'Custom:desk100', 'NOT_INUSE');
    writeChannelFunction(channel, 'DEVICE_STATE', 'Custom:phone100', 'UNAVAILABLE');
    assert.equal(sub('${EXTENSION_STATE(100@funcs)}'), 'NOT_INUSE');
    writeChannelFunction(channel, 'DEVICE_STATE', 'Custom:desk100', 'UNAVAILABLE');
    assert.equal(sub('${EXTENSION_STATE(100@funcs)}'), 'UNAVAILABLE');
    assert.deepEqual(
      changes.map((change) => `${change.exten}@${change.context}:${change.previous}>${change.state}`),
      [
        '100@funcs:NOT_INUSE>INUSE',
        '100@funcs:INUSE>RINGINUSE',
        '100@funcs:RINGINUSE>RINGING',
        '100@funcs:RINGING>NOT_INUSE',
        '100@funcs:NOT_INUSE>UNAVAILABLE',
      ],
    );
    writeChannelFunction(channel, 'DEVICE_STATE', 'Custom:desk300', 'BUSY');
    assert.equal(sub('${EXTENSION_STATE(300)}'), 'BUSY', 'the context defaults to default');
    assert.equal(sub('${EXTENSION_STATE(999@funcs)}'), 'UNKNOWN', 'no hint');
    assert.equal(sub('${HINT(100)}'), 'Custom:desk100&Custom:phone100');
    assert.equal(sub('${HINT}'), 'Custom:desk100&Custom:phone100');
    assert.throws(() => writeChannelFunction(channel, 'DEVICE_STATE', 'PJSIP/alice', 'INUSE'), /only Custom:/);
    assert.throws(() => writeChannelFunction(channel, 'DEVICE_STATE', 'Custom:x', 'SLEEPY'), /unknown state/);
    assert.equal(sub(`\${DEVICE_STATE(${channel.name.slice(0, channel.name.lastIndexOf('-'))})}`), 'INUSE', 'derived from the channel');
  });

  test('a dialplan reload watches the new hints', async () => {
    const file = join(dir, 'extensions.conf');
    writeFileSync(file, `${DIALPLAN}\n[reloaded]\nexten => 400,hint,Custom:desk400\nexten => 400,1,NoOp()\n`);
    await core.modules.reload('pbx_config.so');
    assert.ok(core.extensionStates.watchedHints().some((hint) => hint.exten === '400' && hint.context === 'reloaded'));
    const changes: string[] = [];
    core.extensionStates.on('change', (change) => changes.push(`${change.exten}@${change.context}:${change.state}`));
    writeChannelFunction(channel, 'DEVICE_STATE', 'Custom:desk400', 'RINGING');
    assert.deepEqual(changes, ['400@reloaded:RINGING']);
    assert.equal(sub('${EXTENSION_STATE(400@reloaded)}'), 'RINGING');
  });

  table('DIALPLAN_EXISTS and VALID_EXTEN', [
    ['${DIALPLAN_EXISTS(funcs)}', '1'],
    ['${DIALPLAN_EXISTS(nowhere)}', '0'],
    ['${DIALPLAN_EXISTS(funcs,100)}', '1'],
    ['${DIALPLAN_EXISTS(funcs,100,2)}', '1'],
    ['${DIALPLAN_EXISTS(funcs,100,second)}', '1'],
    ['${DIALPLAN_EXISTS(funcs,100,3)}', '0'],
    ['${DIALPLAN_EXISTS(funcs,999)}', '0'],
    ['${VALID_EXTEN(,200)}', '1'],
    ['${VALID_EXTEN(funcs,200,2)}', '0'],
    ['${VALID_EXTEN(default,300)}', '1'],
    ['${VALID_EXTEN(funcs,100,second)}', '0'],
  ]);
});

describe('astdb functions', () => {
  test('DB, DB_EXISTS, DB_KEYS, DB_DELETE', () => {
    writeChannelFunction(channel, 'DB', 'people/alice', '100');
    writeChannelFunction(channel, 'DB', 'people/bob', '200');
    writeChannelFunction(channel, 'DB', 'people/team/carol', '300');
    writeChannelFunction(channel, 'DB', 'people-x/dave', '400');
    assert.equal(sub('${DB(people/alice)}|${DB_RESULT}|${DB(people/nobody)}'), '100|100|');
    assert.equal(sub('${DB_EXISTS(people/bob)}|${DB_RESULT}'), '1|200');
    assert.equal(sub('${DB_EXISTS(people/nobody)}'), '0');
    assert.equal(sub('${DB_KEYS(people)}'), 'alice,bob,team');
    assert.equal(sub('${DB_KEYS(people/team)}'), 'carol');
    assert.ok(sub('${DB_KEYS()}').split(',').includes('people-x'));
    assert.equal(sub('${DB_DELETE(people/alice)}|${DB(people/alice)}|${DB_KEYS(people)}'), '100||bob,team');
    assert.equal(sub('${DB(nokey)}'), '', 'family/key is required');
    writeChannelFunction(channel, 'DB_DELETE', 'people-x/dave', 'ignored');
    assert.equal(sub('${DB_EXISTS(people-x/dave)}'), '0');
    writeChannelFunction(channel, 'DB', 'people/team/dan', '301');
    writeChannelFunction(channel, 'DB', 'people/team', 'the team itself');
    assert.equal(core.astdb.deleteTree('people', 'team'), 3);
    assert.equal(sub('${DB_KEYS(people)}|${DB(people/bob)}'), 'bob|200');
    assert.throws(() => writeChannelFunction(channel, 'DB', 'nokey', '1'), /family\/key/);
    assert.throws(() => writeChannelFunction(channel, 'DB', `f/${'k'.repeat(600)}`, '1'), /longer/);
  });
});

describe('the registry', () => {
  test('names every function the issue lists, and refuses the ones reaching outside', () => {
    for (const name of ['IF', 'IFTIME', 'ISNULL', 'EXISTS', 'LEN', 'CUT', 'FIELDQTY', 'FIELDNUM', 'LISTFILTER', 'REGEX', 'REPLACE', 'FILTER', 'TOUPPER', 'TOLOWER', 'SPRINTF', 'STRFTIME', 'STRPTIME', 'RAND', 'MATH', 'BASE64_ENCODE', 'BASE64_DECODE', 'URIENCODE', 'URIDECODE', 'QUOTE', 'CSV_QUOTE', 'HASH', 'HASHKEYS', 'ARRAY', 'GLOBAL', 'SHARED', 'CALLERID', 'CONNECTEDLINE', 'CHANNEL', 'DEVICE_STATE', 'EXTENSION_STATE', 'DB', 'DB_EXISTS', 'DB_DELETE', 'DB_KEYS', 'DIALPLAN_EXISTS', 'VALID_EXTEN', 'HANGUPCAUSE', 'TALK_DETECT', 'LOCAL', 'LOCAL_PEEK', 'TIMEOUT']) {
      assert.ok(core.functions.has(name), name);
      assert.ok(core.functions.has(name.toLowerCase()), `${name} in lower case`);
    }
    for (const name of ['SHELL', 'SYSTEM', 'FILE', 'CURL']) {
      assert.equal(core.functions.has(name), false, name);
      assert.equal(isUnprovidedDialplanFunction(name), true, name);
    }
    assert.equal(core.functions.has('NOSUCHFUNC'), false);
    assert.equal(new Set(core.functions.names()).size, core.functions.names().length);
  });

  test('hostile arguments answer nothing rather than failing', () => {
    const long = 'x'.repeat(MAX_VARIABLE_VALUE_LENGTH);
    for (const name of core.functions.names()) {
      for (const args of ['', ',,,,', '(((', long, '\\', '"', '%n%s%s%s', '-1,-1,-1', 'a/b/../../etc', '__proto__', 'constructor']) {
        const value = readChannelFunction(other, name, args);
        assert.ok(value === undefined || value.length <= MAX_VARIABLE_VALUE_LENGTH, `${name}(${args.slice(0, 20)})`);
      }
    }
    assert.equal(sub('${NOSUCHFUNC(1)}'), '');
  });

  test('arguments shaped to multiply work stay cheap', () => {
    channel.setVariable('DASHES', '-'.repeat(30_000));
    const ms = cpuMs(() => {
      const cut = readChannelFunction(channel, 'CUT', `DASHES,-,${'1-&'.repeat(20_000)}1`);
      assert.ok(cut !== undefined && cut.length <= MAX_VARIABLE_VALUE_LENGTH);
      const ranges = Array.from({ length: 10_000 }, (_, i) => `\\x${(i % 200).toString(16).padStart(2, '0')}-\\xff`).join('');
      assert.equal(readChannelFunction(channel, 'FILTER', `${ranges},abc`), 'abc');
    });
    assert.ok(ms < 2000, `took ${ms} ms of CPU`);
  });
});
