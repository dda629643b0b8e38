// The contract between the core and a channel technology (Local, SIP, external media, ...).
// A technology creates channels and drives their far end; the core drives everything else.
import type { Frame } from '../../media/frame.ts';
import type { Channel } from './channel.ts';

/**
 * Conditions a channel can indicate to its far end. `stop` ends whatever indication is in
 * progress (Asterisk's indication -1, what ARI's ringStop sends).
 */
export type Indication = 'ringing' | 'progress' | 'busy' | 'congestion' | 'hold' | 'unhold' | 'answer' | 'stop';

/** What the core asks of one channel's technology side. */
export interface ChannelDriver {
  /** Start calling the far end (outbound channels). The driver reports progress back on the channel. */
  call(): void;
  /** The core answered this (inbound) channel. */
  answer(): void;
  /** The channel is going away; release the far end with this cause. */
  hangup(cause: number): void;
  indicate(indication: Indication, musicClass?: string): void;
  /** A whole DTMF digit towards the far end. */
  sendDigit(digit: string, durationMs: number): void;
  /** One 20 ms frame towards the far end. Must not keep a reference to `frame.samples`. */
  writeFrame(frame: Frame): void;
  /** Out-of-call text towards the far end, if the technology carries text. */
  sendText?(text: string): void;
  /**
   * Sends the far end to another destination of the same technology (`resource` is the part of
   * the endpoint after `TECH/`), e.g. a SIP 302 or REFER. Technologies that cannot leave it out.
   */
  redirect?(resource: string): void;
}

export interface ChannelRequest {
  /** The part of the dial string after `TECH/`. */
  readonly resource: string;
  readonly channelId?: string;
  /** Id of the second channel of technologies that create two (Local `;2`). */
  readonly otherChannelId?: string;
  /** The channel this request is made on behalf of (inherits linked id and language). */
  readonly requestor?: Channel;
  readonly formats?: readonly string[];
}

export interface ChannelTechnology {
  /** As written in dial strings: `Local`, `PJSIP`, ... */
  readonly name: string;
  readonly description: string;
  /** How many channels one request makes (Local: a pair); 1 when absent. Counted against max_channels. */
  readonly channelsPerRequest?: number;
  /**
   * Creates the outbound channel for a dial string (not yet calling).
   * Throws InvalidError for a malformed resource, NotFoundError for an unknown destination and
   * UnavailableError when the channel cannot be had now (a limit is reached).
   */
  request(request: ChannelRequest): Channel;
}
