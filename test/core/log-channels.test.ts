import { strict as assert } from 'node:assert';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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

  afterEach(async () => {
    await channels.close();
    rmSync(join(logsDir, '..'), { recursive: true, force: true });
  });

  /** The file's text once every queued line is written. */
  const read = async (name: string): Promise<string> => {
    await channels.flush();
    return readFileSync(join(logsDir, name), 'utf8');
  };

  it('opens the default console and messages.log channels', async () => {
    channels.openDefaults({ console: true });
    assert.deepEqual(channels.list(), [
      { channel: 'console', type: 'Console', status: 'Enabled', configuration: 'notice warning error' },
      { channel: 'messages.log', type: 'File', status: 'Enabled', configuration: 'notice warning error' },
    ]);
    assert.ok(existsSync(join(logsDir, 'messages.log')));
  });

  it('leaves the console out when not wanted', async () => {
    channels.openDefaults({ console: false });
    assert.deepEqual(channels.list().map((c) => c.channel), ['messages.log']);
  });

  it('writes each line only to the channels recording its level', async () => {
    channels.openDefaults({ console: true });
    channels.create('debug.log', 'debug');
    channels.create('all.log', '*');
    channels.write('debug', 'a debug line');
    channels.write('warning', 'a warning line');
    channels.write('dtmf', 'a dtmf line');

    assert.match(await read('debug.log'), /^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\] DEBUG: a debug line\n$/);
    assert.equal((await read('messages.log')).split('\n').filter(Boolean).length, 1);
    assert.match(await read('messages.log'), /WARNING: a warning line/);
    assert.deepEqual((await read('all.log')).split('\n').filter(Boolean).map((line) => line.replace(/^\[[^\]]+\] /, '')), [
      'DEBUG: a debug line',
      'WARNING: a warning line',
      'DTMF: a dtmf line',
    ]);
    assert.equal(consoleText.length, 1);
    assert.match(consoleText[0], /WARNING: a warning line/);
  });

  it('reports configuration in level order, accepting commas, spaces and any case', async () => {
    channels.create('mixed.log', 'ERROR, notice  security,debug');
    channels.create('every.log', '*');
    const byName = Object.fromEntries(channels.list().map((c) => [c.channel, c.configuration]));
    assert.equal(byName['mixed.log'], 'debug notice error security');
    assert.equal(byName['every.log'], 'debug notice warning error verbose dtmf fax security');
  });

  it('create: empty or unknown levels → InvalidError, existing name → ConflictError', async () => {
    assert.throws(() => channels.create('a.log', ''), InvalidError);
    assert.throws(() => channels.create('a.log', ' , '), InvalidError);
    assert.throws(() => channels.create('a.log', 'notice,loud'), InvalidError);
    channels.create('a.log', 'notice');
    assert.throws(() => channels.create('a.log', 'error'), ConflictError);
    assert.throws(() => parseLogLevels(''), InvalidError);
  });

  it('create: names that are empty or leave the logs directory → InvalidError', async () => {
    for (const name of ['', '.', '..', '../escape.log', 'sub/dir.log', '/etc/passwd', 'a..b']) {
      assert.throws(() => channels.create(name, 'notice'), InvalidError, `name ${JSON.stringify(name)}`);
    }
    assert.deepEqual(channels.list(), []);
  });

  it('delete: stops writing and keeps the file; unknown → NotFoundError', async () => {
    channels.openDefaults({ console: true });
    channels.write('notice', 'before');
    channels.delete('messages.log');
    channels.delete('console');
    channels.write('notice', 'after');
    assert.deepEqual(channels.list(), []);
    assert.match(await read('messages.log'), /before/);
    assert.doesNotMatch(await read('messages.log'), /after/);
    assert.equal(consoleText.length, 1);
    assert.throws(() => channels.delete('messages.log'), NotFoundError);
  });

  it('rotate: moves the file to <name>.<N> with the next free N and reopens it empty', async () => {
    channels.create('app.log', 'notice');
    channels.write('notice', 'first');
    await channels.rotate('app.log');
    assert.equal(await read('app.log'), '');
    assert.match(await read('app.log.0'), /first/);

    channels.write('notice', 'second');
    await channels.rotate('app.log');
    assert.match(await read('app.log.1'), /second/);

    channels.write('notice', 'third');
    assert.match(await read('app.log'), /NOTICE: third\n$/);
    assert.doesNotMatch(await read('app.log'), /first|second/);
    assert.equal(channels.list()[0].status, 'Enabled');
    assert.throws(() => channels.rotate('nope.log'), NotFoundError);
  });

  it('rotate recreates a file removed behind its back', async () => {
    channels.create('gone.log', 'notice');
    rmSync(join(logsDir, 'gone.log'));
    await channels.rotate('gone.log');
    channels.write('notice', 'back');
    assert.match(await read('gone.log'), /back/);
  });

  it('feeds pino records to the channels under the mapped levels', async () => {
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

    assert.deepEqual((await read('debug.log')).split('\n').filter(Boolean).map((l) => l.replace(/^\[[^\]]+\] /, '')), [
      'DEBUG: tracing',
      'DEBUG: debugging',
    ]);
    assert.match(await read('notice.log'), /NOTICE: informing \{"channelId":"abc"\}\n$/);
    assert.equal(await read('verbose.log'), await read('notice.log'));
    const problems = await read('problems.log');
    assert.match(problems, /WARNING: warning you\n/);
    assert.match(problems, /ERROR: failing\nError: kaput\n {4}at /);
    assert.match(problems, /ERROR: dying\n$/);
  });

  it('takes the time of pino records with ISO timestamps, and leaves pino housekeeping fields out', async () => {
    channels.create('notice.log', 'notice');
    const logger = pino(
      { name: 'patchbay', timestamp: pino.stdTimeFunctions.isoTime, base: { pid: 1, hostname: 'h' } },
      channels.createPinoDestination(),
    );
    logger.info('hello');
    const expected = new Date();
    const [, stamp] = /^\[(\d{4}-\d{2}-\d{2}) /.exec(await read('notice.log')) ?? [];
    assert.equal(stamp, `${expected.getFullYear()}-${String(expected.getMonth() + 1).padStart(2, '0')}-${String(expected.getDate()).padStart(2, '0')}`);
    assert.match(await read('notice.log'), /NOTICE: hello\n$/);
  });

  it('create: names with control characters or path separators → InvalidError', async () => {
    for (const name of ['a\nb.log', 'tab\t.log', 'bell\x07.log', 'del\x7f.log', 'back\\slash.log', 'x'.repeat(256)]) {
      assert.throws(() => channels.create(name, 'notice'), InvalidError, `name ${JSON.stringify(name)}`);
    }
    assert.deepEqual(channels.list(), []);
  });

  describe('files outside the logs directory are never written', () => {
    let outside: string;
    let target: string;
    beforeEach(() => {
      outside = mkdtempSync(join(tmpdir(), 'patchbay-outside-'));
      target = join(outside, 'target.txt');
      writeFileSync(target, 'precious\n');
      mkdirSync(logsDir, { recursive: true });
    });
    afterEach(() => rmSync(outside, { recursive: true, force: true }));

    it('a symbolic link, a hard link or a directory in the logs directory → ConflictError, the target untouched', async () => {
      symlinkSync(target, join(logsDir, 'soft.log'));
      linkSync(target, join(logsDir, 'hard.log'));
      mkdirSync(join(logsDir, 'dir.log'));
      assert.throws(() => channels.create('soft.log', '*'), (err: Error) => err instanceof ConflictError && /symbolic link/.test(err.message));
      assert.throws(() => channels.create('hard.log', '*'), (err: Error) => err instanceof ConflictError && /hard links/.test(err.message));
      assert.throws(() => channels.create('dir.log', '*'), ConflictError);
      channels.write('error', 'a line');
      await channels.flush();
      assert.equal(readFileSync(target, 'utf8'), 'precious\n');
      assert.deepEqual(channels.list(), []);
    });

    it('a file swapped for a link after creation is not written through; the channel turns Disabled until rotated', async () => {
      channels.create('app.log', 'notice');
      channels.write('notice', 'first');
      await channels.flush();
      renameSync(join(logsDir, 'app.log'), join(logsDir, 'moved.log'));
      symlinkSync(target, join(logsDir, 'app.log'));
      channels.write('notice', 'through the link?');
      await channels.flush();
      assert.equal(readFileSync(target, 'utf8'), 'precious\n');
      assert.equal(channels.list()[0]!.status, 'Disabled');
      assert.match(readFileSync(join(logsDir, 'moved.log'), 'utf8'), /first/);
      // Rotation moves the link aside (it is not followed) and starts a fresh file.
      await channels.rotate('app.log');
      channels.write('notice', 'after rotation');
      assert.match(await read('app.log'), /after rotation/);
      assert.equal(channels.list()[0]!.status, 'Enabled');
      assert.equal(readFileSync(target, 'utf8'), 'precious\n');
    });
  });

  it('the number of channels is capped: beyond → ConflictError naming the limit; a delete makes room', () => {
    const capped = new LogChannels({ logsDir, maxChannels: 3 });
    try {
      capped.openDefaults({ console: true });
      capped.create('one.log', 'notice');
      assert.throws(() => capped.create('two.log', 'notice'), (err: Error) => err instanceof ConflictError && /at most 3/.test(err.message));
      assert.equal(existsSync(join(logsDir, 'two.log')), false);
      capped.delete('one.log');
      capped.create('two.log', 'notice');
    } finally {
      void capped.close();
    }
  });

  it('file channels hold no file descriptor between writes', async () => {
    const many = new LogChannels({ logsDir, maxChannels: 1000 });
    const openFds = (): number => readdirSync('/proc/self/fd').length;
    const before = openFds();
    for (let i = 0; i < 300; i++) many.create(`ch-${i}.log`, 'notice');
    many.write('notice', 'to all');
    await many.flush();
    assert.ok(openFds() - before < 20, `descriptors grew by ${openFds() - before} for 300 channels`);
    assert.match(readFileSync(join(logsDir, 'ch-299.log'), 'utf8'), /NOTICE: to all\n$/);
    await many.close();
  });

  it('close() writes every queued line before it resolves', async () => {
    channels.create('last.log', 'notice');
    for (let i = 0; i < 1000; i++) channels.write('notice', `line ${i}`);
    await channels.close();
    const lines = readFileSync(join(logsDir, 'last.log'), 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 1000);
    assert.match(lines[999]!, /NOTICE: line 999$/);
    channels.write('notice', 'after close');
    assert.doesNotMatch(readFileSync(join(logsDir, 'last.log'), 'utf8'), /after close/);
  });
});
