// The in-call DTMF features of a two-party bridge (Asterisk's bridge_basic.c and
// bridge_builtin_features.c), for the parties Dial()'s letters give the right: `blindxfer` (t/T)
// and `disconnect` (h/H). The codes are features.conf's [featuremap] (features-conf.ts); each
// party's digits are read by a FeatureDigits (channels/feature-digits.ts) before they cross.
//
// Blind transfer, as feature_blind_transfer and grab_transfer do it: the other party is put on
// hold (music), the transferer is taken aside from the call and hears the transfer announcement
// (transferannouncesound, a digit cuts it short and counts) and dial tone; it dials until no
// longer extension of the transfer context (TRANSFER_CONTEXT, else its own) could match, `#`, or
// transferdigittimeout between digits; an extension that does not exist costs one of
// transferdialattempts (transferretrysound, then transferinvalidsound) and the call goes on as
// before. Once it exists, the transferee goes there and the transferer is done (the core's blind
// transfer: BLINDTRANSFER, BridgeBlindTransfer with is_external false). TRANSFER_EXTEN names the
// extension outright, when it exists.
//
// Disconnect, as feature_hangup: the party that pressed it leaves the call, hung up; its peer
// sees the other hang up (Dial's caller ends, or goes on with g).
import type { Logger } from 'pino';
import type { ToneName } from '../media/tonezones.ts';
import { CAUSE } from './channels/causes.ts';
import type { Channel } from './channels/channel.ts';
import { FeatureDigits, type FeatureCode } from './channels/feature-digits.ts';
import type { TwoPartyCall } from './channels/two-party-call.ts';
import { blindTransfer } from './channels/call-transfers.ts';
import type { BridgeFeatureConfig, FeatureName } from './features-conf.ts';

/** The features one party of a call may use (Dial's letters). */
export type FeatureRights = ReadonlySet<FeatureName>;

/** A playback started by the features: when it ends, and how to end it sooner. */
export interface FeaturePlayback {
  readonly done: Promise<void>;
  stop(): void;
}

export interface BridgeFeatureDeps {
  readonly log: Logger;
  /** Plays a sound to a channel (it throws or ends at once when it cannot). */
  play(channel: Channel, sound: string): FeaturePlayback;
  /** Plays a tone of the channel's zone until the returned function is called. */
  playTone(channel: Channel, tone: ToneName): () => void;
  exists(context: string, exten: string, callerId: string | undefined): boolean;
  matchMore(context: string, exten: string, callerId: string | undefined): boolean;
  /** Runs the dialplan on a channel at its location (a blind transfer's transferee). */
  startDialplan(channel: Channel): void;
}

/** Most digits a transferer dials (AST_MAX_EXTENSION less one). */
const MAX_TRANSFER_DIGITS = 79;

/** The features Patchbay carries out; a right to any other is ignored (named at start-up). */
const RUNNABLE: ReadonlySet<FeatureName> = new Set(['blindxfer', 'disconnect']);

export class BridgeFeatures {
  constructor(
    private readonly config: BridgeFeatureConfig,
    private readonly deps: BridgeFeatureDeps,
  ) {}

  /**
   * What TwoPartyCall.connect takes as `features` for these parties' rights; undefined when none
   * of them has a feature with a code (digits just cross, as before).
   */
  forParties(rights: ReadonlyMap<Channel, FeatureRights>): ((call: TwoPartyCall) => ReadonlyMap<Channel, FeatureDigits>) | undefined {
    const usable = new Map<Channel, FeatureName[]>();
    for (const [party, names] of rights) {
      const runnable = [...names].filter((name) => RUNNABLE.has(name) && this.config.featureMap[name] !== '');
      if (runnable.length > 0) usable.set(party, runnable);
    }
    if (usable.size === 0) return undefined;
    return (call) => {
      const readers = new Map<Channel, FeatureDigits>();
      for (const [party, names] of usable) {
        const codes: FeatureCode[] = names.map((name) => ({ digits: this.config.featureMap[name], run: () => this.#run(name, call, party) }));
        const pass = (digit: string, durationMs: number): void => {
          const peer = call.peerOf(party);
          if (peer && !peer.hangingUp) peer.driver.sendDigit(digit, durationMs);
        };
        readers.set(party, new FeatureDigits(codes, this.config.options.featureDigitTimeoutMs, pass));
      }
      return readers;
    };
  }

  #run(name: FeatureName, call: TwoPartyCall, party: Channel): void {
    if (!call.has(party) || party.hangingUp) return;
    if (name === 'disconnect') {
      this.deps.log.info({ channel: party.name }, `Channel ${party.name}: DTMF disconnect`);
      party.hangup(CAUSE.normal);
      return;
    }
    if (name === 'blindxfer') {
      this.#blindTransfer(call, party).catch((error: unknown) => {
        this.deps.log.warn({ channel: party.name, err: (error as Error).message }, 'DTMF blind transfer failed');
        call.resumeMedia();
      });
    }
  }

  async #blindTransfer(call: TwoPartyCall, transferer: Channel): Promise<void> {
    const transferee = call.peerOf(transferer);
    if (!transferee) return;
    this.deps.log.info({ channel: transferer.name }, `Channel ${transferer.name}: Started DTMF blind transfer.`);
    call.suspendMedia();
    transferee.indicate('hold');
    const context = transferer.getVariable('TRANSFER_CONTEXT')?.trim() || transferer.location.context;
    const exten = await this.#grabTransfer(transferer, context, () => call.has(transferer));
    // The call came apart meanwhile (either hung up): nothing is left to transfer.
    if (!call.has(transferer) || transferer.hangingUp || transferee.hangingUp) {
      if (!transferee.hangingUp) transferee.indicate('unhold');
      return;
    }
    transferee.indicate('unhold');
    if (exten === undefined) {
      call.resumeMedia();
      return;
    }
    this.deps.log.info({ channel: transferer.name }, `Channel ${transferer.name}: Blind transfer target '${exten}@${context}'`);
    const result = blindTransfer(transferer, { context, exten }, (channel) => this.deps.startDialplan(channel), [], undefined, { external: false });
    if (result !== 'Success') call.resumeMedia();
  }

  /** grab_transfer: the extension the transferer chose, or undefined (none valid, or it hung up). */
  async #grabTransfer(channel: Channel, context: string, stillIn: () => boolean): Promise<string | undefined> {
    const callerId = channel.caller.number || undefined;
    const override = channel.getVariable('TRANSFER_EXTEN')?.trim();
    if (override) {
      if (this.deps.exists(context, override, callerId)) return override;
      this.deps.log.warn({ channel: channel.name }, `Override extension '${override.slice(0, 80)}' does not exist in context '${context}'`);
    }
    const options = this.config.options;
    let first = options.transferAnnounceSound ? await this.#playUntilDigit(channel, options.transferAnnounceSound) : '';
    for (let attempt = 1; attempt <= options.transferDialAttempts; attempt++) {
      // The call came apart under the transferer (its peer hung up): nothing more is played to it.
      if (channel.hangingUp || !stillIn()) return undefined;
      const dialled = await this.#dialTone(channel, context, first, callerId);
      first = '';
      if (dialled === undefined) return undefined;
      if (dialled !== '' && this.deps.exists(context, dialled, callerId)) return dialled;
      this.deps.log.info({ channel: channel.name }, dialled === '' ? `Channel ${channel.name}: Dialed no digits.` : `Channel ${channel.name}: Dialed '${dialled}@${context}' does not exist.`);
      if (!stillIn()) return undefined;
      const sound = attempt < options.transferDialAttempts ? options.transferRetrySound : options.transferInvalidSound;
      if (sound) await this.#playUntilDigit(channel, sound, false);
    }
    return undefined;
  }

  /**
   * Plays `sound`; with `interruptible`, a digit ends it and is returned ('' otherwise, or when
   * the sound could not play). Resolves at once for a channel hanging up.
   */
  async #playUntilDigit(channel: Channel, sound: string, interruptible = true): Promise<string> {
    if (channel.hangingUp) return '';
    let playback: FeaturePlayback;
    try {
      playback = this.deps.play(channel, sound);
    } catch (error) {
      this.deps.log.warn({ channel: channel.name, sound, err: (error as Error).message }, 'transfer sound not played');
      return '';
    }
    let pressed = '';
    const onDigit = ({ digit }: { digit: string }): void => {
      if (!interruptible || pressed !== '') return;
      pressed = digit;
      playback.stop();
    };
    const onHangup = (): void => playback.stop();
    channel.on('dtmf', onDigit);
    channel.once('hangup', onHangup);
    try {
      await playback.done;
    } catch {
      // A sound that failed is as one that ended.
    } finally {
      channel.off('dtmf', onDigit);
      channel.off('hangup', onHangup);
    }
    return pressed;
  }

  /**
   * ast_app_dtget: dial tone until the first digit, then digits until `#`, no longer extension
   * could match, or the digit timeout. Resolves with the digits (maybe none), undefined when the
   * channel hung up.
   */
  #dialTone(channel: Channel, context: string, first: string, callerId: string | undefined): Promise<string | undefined> {
    const { matchMore } = this.deps;
    const timeoutMs = this.config.options.transferDigitTimeoutMs;
    return new Promise((resolve) => {
      let dialled = first === '#' ? '' : first;
      let stopTone = first === '' ? this.deps.playTone(channel, 'dial') : (): void => undefined;
      let timer: NodeJS.Timeout | undefined;
      const finish = (result: string | undefined): void => {
        clearTimeout(timer);
        stopTone();
        channel.off('dtmf', onDigit);
        channel.off('hangup', onHangup);
        resolve(result);
      };
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => finish(dialled), timeoutMs);
      };
      const onDigit = ({ digit }: { digit: string }): void => {
        stopTone();
        stopTone = (): void => undefined;
        if (digit === '#') return finish(dialled);
        dialled += digit;
        if (dialled.length >= MAX_TRANSFER_DIGITS || !matchMore(context, dialled, callerId)) return finish(dialled);
        arm();
      };
      const onHangup = (): void => finish(undefined);
      channel.on('dtmf', onDigit);
      channel.once('hangup', onHangup);
      if (first === '#' || (dialled !== '' && !matchMore(context, dialled, callerId))) finish(dialled);
      else if (channel.hangingUp) finish(undefined);
      else arm();
    });
  }
}
