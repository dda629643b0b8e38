// The IVR applications: Background (a prompt a digit interrupts, the digits then choosing an
// extension), WaitExten (waiting for a choice, `t` on timeout) and Read (digits into a variable).
import { splitArgs } from '../../dialplan/args.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import { collectAndGo, DigitReader, goToTimeout } from '../digits.ts';
import { responseTimeoutMs } from '../timeouts.ts';

/** Option letters, with a parenthesised argument each may carry (`m(class)`, `t(#*)`). */
function parseOptions(text: string | undefined): Map<string, string> {
  const options = new Map<string, string>();
  const source = text ?? '';
  for (let i = 0; i < source.length; i++) {
    const letter = source[i];
    if (source[i + 1] === '(') {
      const close = source.indexOf(')', i + 2);
      const end = close < 0 ? source.length : close;
      options.set(letter, source.slice(i + 2, end));
      i = end;
    } else {
      options.set(letter, '');
    }
  }
  return options;
}

const soundUris = (files: string): string[] =>
  files
    .split('&')
    .map((file) => file.trim())
    .filter((file) => file !== '')
    .map((file) => `sound:${file}`);

/**
 * Background(filename[&filename2...][,options[,langoverride[,context]]]): plays while listening
 * for DTMF. Options: `s` skip when the channel is not answered, `n` play without answering, `m`
 * only a digit that is a one-digit extension of the context interrupts. A digit stops the prompt
 * and, with the digits after it (TIMEOUT(digit) apart), chooses an extension; with none the
 * dialplan goes on. BACKGROUNDSTATUS is SUCCESS or FAILED.
 */
export const background: DialplanApplication = {
  name: 'Background',
  synopsis: 'Plays prompts while listening for DTMF; the digits dialed choose an extension (options s, n, m; language; context)',
  async execute(channel, [files = '', optionText, language, contextArg], services): Promise<AppOutcome> {
    const options = parseOptions(optionText);
    const context = contextArg?.trim() || channel.location.context;
    if (!channel.answered) {
      if (options.has('s')) {
        channel.setSystemVariable('BACKGROUNDSTATUS', 'SUCCESS');
        return 'next';
      }
      if (!options.has('n')) channel.answer();
    }
    const reader = new DigitReader(channel, services);
    try {
      const callerId = channel.caller.number || undefined;
      const interrupts = options.has('m') ? (digit: string) => services.dialplan().exists(context, digit, 1, callerId) : () => true;
      const { failed } = await reader.play(soundUris(files), language?.trim() || channel.language, interrupts);
      channel.setSystemVariable('BACKGROUNDSTATUS', failed ? 'FAILED' : 'SUCCESS');
      if (channel.hangingUp) return 'stop';
      const first = reader.take();
      if (first === undefined) return 'next';
      return await collectAndGo(channel, services, reader, context, first);
    } finally {
      reader.close();
    }
  },
};

/**
 * WaitExten([seconds][,options]): waits for the caller to dial an extension of the current context;
 * the wait is `seconds`, else TIMEOUT(response). On timeout the channel goes to `t` (or `e`),
 * else the call ends. Option `m[(class)]` plays music on hold meanwhile.
 */
export const waitExten: DialplanApplication = {
  name: 'WaitExten',
  synopsis: 'Waits for the caller to dial an extension; goes to t on timeout (option m for music on hold)',
  async execute(channel, [secondsArg, optionText], services): Promise<AppOutcome> {
    const options = parseOptions(optionText);
    const seconds = Number.parseFloat(secondsArg ?? '');
    const timeoutMs = Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, 24 * 3600 * 1000) : responseTimeoutMs(channel);
    const context = channel.location.context;
    const reader = new DigitReader(channel, services);
    let music = false;
    try {
      if (options.has('m') && services.musicOnHold) {
        try {
          services.musicOnHold.start(channel, options.get('m') || undefined);
          music = true;
        } catch (error) {
          services.log.warn({ channel: channel.name }, `WaitExten: no music on hold: ${(error as Error).message}`);
        }
      }
      const first = await reader.next(timeoutMs);
      if (music) {
        services.musicOnHold?.stop(channel);
        music = false;
      }
      if (channel.hangingUp || reader.done) return 'stop';
      if (first === undefined) return goToTimeout(channel, services, context);
      return await collectAndGo(channel, services, reader, context, first);
    } finally {
      if (music) services.musicOnHold?.stop(channel);
      reader.close();
    }
  },
};

const MAX_READ_DIGITS = 255;

/**
 * Read(variable[,filename[&filename2...]][,maxdigits][,options][,attempts][,timeout]): plays the
 * prompt (a digit interrupts it) and reads digits into the variable until `maxdigits`, a
 * terminator (`#`, or those of option `t(...)`) or `timeout` seconds without a digit (default
 * TIMEOUT(response)). Options: `s` skip when not answered, `n` read without answering, `i` the
 * prompt is an indication tone. Empty input is tried `attempts` times. READSTATUS: OK, TIMEOUT,
 * HANGUP, SKIPPED, ERROR.
 */
export const read: DialplanApplication = {
  name: 'Read',
  synopsis: 'Reads DTMF digits into a variable after a prompt (maxdigits, options s/n/i/t(), attempts, timeout; READSTATUS)',
  async execute(channel, _args, services, rawData): Promise<AppOutcome> {
    const [variable = '', files = '', maxArg, optionText, attemptsArg, timeoutArg] = splitArgs(rawData);
    const name = variable.trim();
    if (name === '') {
      services.log.warn({ channel: channel.name }, 'Read requires an argument (variable)');
      channel.setSystemVariable('READSTATUS', 'ERROR');
      return 'next';
    }
    const options = parseOptions(optionText);
    const max = Number.parseInt(maxArg ?? '', 10);
    const maxDigits = Number.isInteger(max) && max > 0 ? Math.min(max, MAX_READ_DIGITS) : MAX_READ_DIGITS;
    const attemptsValue = Number.parseInt(attemptsArg ?? '', 10);
    let attempts = Number.isInteger(attemptsValue) && attemptsValue > 0 ? Math.min(attemptsValue, 100) : 1;
    const seconds = Number.parseFloat(timeoutArg ?? '');
    const timeoutMs = Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, 3600 * 1000) : responseTimeoutMs(channel);
    const terminators = options.has('t') ? options.get('t') || '' : '#';
    if (!channel.answered) {
      if (options.has('s')) {
        channel.setSystemVariable('READSTATUS', 'SKIPPED');
        return 'next';
      }
      if (!options.has('n')) channel.answer();
    }
    // An indication tone (`i`) sounds until the first digit; files play before the reading starts.
    const tone = options.has('i') && files.trim() !== '' ? `tone:${files.trim()}` : undefined;
    const prompts = files.trim() === '' || tone ? [] : soundUris(files);
    const reader = new DigitReader(channel, services);
    try {
      while (attempts-- > 0) {
        if (prompts.length > 0) await reader.play(prompts, channel.language);
        let tonePlayback = tone ? services.playbacks?.playOnChannel(channel, { media: [tone], language: channel.language, internal: true }) : undefined;
        let entered = '';
        let terminated = false;
        while (entered.length < maxDigits) {
          const digit = await reader.next(timeoutMs);
          if (tonePlayback) {
            services.playbacks?.stopPlayback(tonePlayback);
            tonePlayback = undefined;
          }
          if (digit === undefined) break;
          if (terminators.includes(digit)) {
            terminated = true;
            break;
          }
          entered += digit;
        }
        if (tonePlayback) services.playbacks?.stopPlayback(tonePlayback);
        if (channel.hangingUp) {
          channel.setSystemVariable('READSTATUS', 'HANGUP');
          return 'stop';
        }
        if (reader.done) return 'next';
        channel.setVariable(name, entered);
        if (entered !== '' || terminated) {
          channel.setSystemVariable('READSTATUS', 'OK');
          return 'next';
        }
      }
      channel.setSystemVariable('READSTATUS', 'TIMEOUT');
      return 'next';
    } finally {
      reader.close();
    }
  },
};
