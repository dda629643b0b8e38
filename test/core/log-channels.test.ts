import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { ConflictError, InvalidError, NotFoundError } from '../../src/core/errors.ts';
import { LogChannels, parseLogLevels } from '../../src/core/log-channels.ts';

describe('LogChannels', () => {
  let logsDir: string;
  let consoleText: string[];
  let channels: LogChannels;

  beforeEach(() => {
    logsDir = join(mkdtempSync(join(tmpdir(), 'patchbay-logs-')), 'logs');
    consoleText = [];
    channels = new LogChannels({ logsDir, consoleSink: { write: (text: string) => consoleText.push(text) } });
  });

  afterEach(() => {
    channels.close();
    rmSync(join(logsDir, '..'), { recursive: true, force: true });
  });

  const read = (name: string) => readFileSync(join(logsDir, name), 'utf8');

  it('opens the default console and messages.log channels', () => {
    channels.openDefaults({ console: true });
    assert.deepEqual(channels.list(), [
      { channel: 'console', type: 'Console', status: 'Enabled', configuration: 'notice warning error' },
      { channel: 'messages.log', type: 'File', status: 'Enabled', configuration: 'notice warning error' },
    ]);
    assert.ok(existsSync(join(logsDir, 'messages.log')));
  });

  it('leaves the console out when not wanted', () => {
    channels.openDefaults({ console: false });
    assert.deepEqual(channels.list().map((c) => c.channel), ['messages.log']);
  });

  it('writes each line only to the channels recording its level', () => {
    channels.openDefaults({ console: true });
    channels.create('debug.log', 'debug');
    channels.create('all.log', '*');
    channels.write('debug', 'a debug line');
    channels.write('warning', 'a warning line');
    channels.write('dtmf', 'a dtmf line');

    assert.match(read('debug.log'), /^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\] DEBUG: a debug line\n$/);
    assert.equal(read('messages.log').split('\n').filter(Boolean).length, 1);
    assert.match(read('messages.log'), /WARNING: a warning line/);
    assert.deepEqual(read('all.log').split('\n').filter(Boolean).map((line) => line.replace(/^\[[^\]]+\] /, '')), [
      'DEBUG: a debug line',
      'WARNING: a warning line',
      'DTMF: a dtmf line',
    ]);
    assert.equal(consoleText.length, 1);
    assert.match(consoleText[0], /WARNING: a warning line/);
  });

  it('reports configuration in level order, accepting commas, spaces and any case', () => {
    channels.create('mixed.log', 'ERROR, notice  security,debug');
    channels.create('every.log', '*');
    const byName = Object.fromEntries(channels.list().map((c) => [c.channel, c.configuration]));
    assert.equal(byName['mixed.log'], 'debug notice error security');
    assert.equal(byName['every.log'], 'debug notice warning error verbose dtmf fax security');
  });

  it('create: empty or unknown levels → InvalidError, existing name → ConflictError', () => {
    assert.throws(() => channels.create('a.log', ''), InvalidError);
    assert.throws(() => channels.create('a.log', ' , '), InvalidError);
    assert.throws(() => channels.create('a.log', 'notice,loud'), InvalidError);
    channels.create('a.log', 'notice');
    assert.throws(() => channels.create('a.log', 'error'), ConflictError);
    assert.throws(() => parseLogLevels(''), InvalidError);
  });

  it('create: names that are empty or leave the logs directory → InvalidError', () => {
    for (const name of ['', '.', '..', '../escape.log', 'sub/dir.log', '/etc/passwd', 'a..b']) {
      assert.throws(() => channels.create(name, 'notice'), InvalidError, `name ${JSON.stringify(name)}`);
    }
    assert.deepEqual(channels.list(), []);
  });

  it('delete: stops writing and keeps the file; unknown → NotFoundError', () => {
    channels.openDefaults({ console: true });
    channels.write('notice', 'before');
    channels.delete('messages.log');
    channels.delete('console');
    channels.write('notice', 'after');
    assert.deepEqual(channels.list(), []);
    assert.match(read('messages.log'), /before/);
    assert.doesNotMatch(read('messages.log'), /after/);
    assert.equal(consoleText.length, 1);
    assert.throws(() => channels.delete('messages.log'), NotFoundError);
  });

  it('rotate: moves the file to <name>.<N> with the next free N and reopens it empty', () => {
    channels.create('app.log', 'notice');
    channels.write('notice', 'first');
    channels.rotate('app.log');
    assert.equal(read('app.log'), '');
    assert.match(read('app.log.0'), /first/);

    channels.write('notice', 'second');
    channels.rotate('app.log');
    assert.match(read('app.log.1'), /second/);

    channels.write('notice', 'third');
    assert.match(read('app.log'), /NOTICE: third\n$/);
    assert.doesNotMatch(read('app.log'), /first|second/);
    assert.equal(channels.list()[0].status, 'Enabled');
    assert.throws(() => channels.rotate('nope.log'), NotFoundError);
  });

  it('rotate recreates a file removed behind its back', () => {
    channels.create('gone.log', 'notice');
    rmSync(join(logsDir, 'gone.log'));
    channels.rotate('gone.log');
    channels.write('notice', 'back');
    assert.match(read('gone.log'), /back/);
  });

  it('feeds pino records to the channels under the mapped levels', () => {
    channels.create('debug.log', 'debug');
    channels.create('notice.log', 'notice');
    channels.create('verbose.log', 'verbose');
    channels.create('problems.log', 'warning,error');
    const logger = pino({ level: 'trace' }, channels.createPinoDestination());
    logger.trace('tracing');
    logger.debug('debugging');
    logger.info({ channelId: 'abc' }, 'informing');
    logger.warn('warning you');
    logger.error(new Error('kaput'), 'failing');
    logger.fatal('dying');

    assert.deepEqual(read('debug.log').split('\n').filter(Boolean).map((l) => l.replace(/^\[[^\]]+\] /, '')), [
      'DEBUG: tracing',
      'DEBUG: debugging',
    ]);
    assert.match(read('notice.log'), /NOTICE: informing \{"channelId":"abc"\}\n$/);
    assert.equal(read('verbose.log'), read('notice.log'));
    const problems = read('problems.log');
    assert.match(problems, /WARNING: warning you\n/);
    assert.match(problems, /ERROR: failing\nError: kaput\n {4}at /);
    assert.match(problems, /ERROR: dying\n$/);
  });

  it('takes the time of pino records with ISO timestamps, and leaves pino housekeeping fields out', () => {
    channels.create('notice.log', 'notice');
    const logger = pino(
      { name: 'patchbay', timestamp: pino.stdTimeFunctions.isoTime, base: { pid: 1, hostname: 'h' } },
      channels.createPinoDestination(),
    );
    logger.info('hello');
    const expected = new Date();
    const [, stamp] = /^\[(\d{4}-\d{2}-\d{2}) /.exec(read('notice.log')) ?? [];
    assert.equal(stamp, `${expected.getFullYear()}-${String(expected.getMonth() + 1).padStart(2, '0')}-${String(expected.getDate()).padStart(2, '0')}`);
    assert.match(read('notice.log'), /NOTICE: hello\n$/);
  });
});
