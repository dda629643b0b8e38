// A kernel without a server, for the unit tests of Channel, Bridge and Playback: the application
// table with one application subscribed to everything, whose events are collected in order, and a
// channel table. Nothing listens on a port, nothing is read from disk, no clock runs.
import type { Frame } from '../../src/media/frame.ts';
import { Applications, type CoreEvent } from '../../src/core/applications.ts';
import type { Channel, ChannelFunctions } from '../../src/core/channels/channel.ts';
import { Channels } from '../../src/core/channels/channels.ts';
import { InvalidError } from '../../src/core/errors.ts';
import type { ChannelDriver, Indication } from '../../src/core/channels/technology.ts';
import { Bridge } from '../../src/core/bridges/bridge.ts';
import type { BridgeInit } from '../../src/core/bridges/bridge-types.ts';

export const APP = 'unit';

/** No dialplan above this kernel: no function reads, none can be written. */
const NO_FUNCTIONS: ChannelFunctions = {
  read: () => undefined,
  write: (_channel, name) => {
    throw new InvalidError(`Unknown function: ${name}`);
  },
  registerWriter: () => undefined,
};

export interface Kernel {
  readonly applications: Applications;
  readonly channels: Channels;
  /** Every event published so far, in order. */
  readonly events: CoreEvent[];
  /** The types of the events published so far (optionally only those about one object). */
  types(aboutId?: string): string[];
  /** Listener and technology failures the channels reported (they go on regardless). */
  readonly errors: { error: unknown; during: string }[];
}

export function kernel(options: { maxChannels?: number } = {}): Kernel {
  const events: CoreEvent[] = [];
  const errors: { error: unknown; during: string }[] = [];
  const applications = new Applications(() => true);
  applications.register(APP, { deliver: (_app, event) => events.push(event) }, true);
  const channels = new Channels({
    applications,
    channelvars: [],
    defaultLanguage: 'en',
    maxChannels: options.maxChannels,
    functions: NO_FUNCTIONS,
    reportError: (error, _channel, during) => errors.push({ error, during }),
  });
  const about = (event: CoreEvent, id: string): boolean =>
    Object.entries(event).some(([field, value]: [string, unknown]) => ['channel', 'bridge', 'playback'].includes(field) && idOf(value) === id);
  return {
    applications,
    channels,
    events,
    errors,
    types: (aboutId) => events.filter((event) => aboutId === undefined || about(event, aboutId)).map((event) => event.type),
  };
}

/**
 * A bridge on the kernel that no bridge table holds: its events go to the kernel's applications;
 * its joins, leaves and end concern no one else.
 */
export function unitBridge(k: Kernel, init: BridgeInit): Bridge {
  return new Bridge({ publish: (event, scope) => k.applications.publish(event, scope), memberJoined: () => undefined, memberLeft: () => undefined, destroyed: () => undefined }, init);
}

function idOf(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null && 'id' in value && typeof value.id === 'string' ? value.id : undefined;
}

/** A technology's far end that records what the core asked of it. */
export class RecordingDriver implements ChannelDriver {
  readonly calls: string[] = [];
  readonly frames: Frame[] = [];
  readonly digits: string[] = [];
  hangupCause: number | undefined;

  call(): void {
    this.calls.push('call');
  }
  answer(): void {
    this.calls.push('answer');
  }
  hangup(cause: number): void {
    this.calls.push('hangup');
    this.hangupCause = cause;
  }
  indicate(indication: Indication): void {
    this.calls.push(`indicate:${indication}`);
  }
  sendDigit(digit: string): void {
    this.digits.push(digit);
  }
  writeFrame(frame: Frame): void {
    // The contract: the driver must not keep frame.samples, so keep a copy.
    this.frames.push({ rate: frame.rate, samples: frame.samples.slice() });
  }
}

let serial = 0;

/** A channel of the test technology `Unit`, with a recording driver. */
export function unitChannel(k: Kernel, init: { direction?: 'inbound' | 'outbound'; state?: Channel['state'] } = {}): { channel: Channel; driver: RecordingDriver } {
  const driver = new RecordingDriver();
  serial++;
  const channel = k.channels.create(
    { name: `Unit/test-${String(serial).padStart(8, '0')}`, technology: 'Unit', direction: init.direction ?? 'inbound', state: init.state ?? 'Ring' },
    () => driver,
  );
  return { channel, driver };
}

/** A 20 ms frame at 8 kHz holding `value` in every sample. */
export function frameOf(value: number): Frame {
  return { rate: 8000, samples: new Int16Array(160).fill(value) };
}
