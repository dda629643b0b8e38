// PJSIP_TRANSFER_HANDLING() (chan_pjsip): who carries out a REFER received on a channel in Stasis.
// `core` (or empty, Asterisk's default) lets the bridging core do a blind transfer itself (a Local
// channel takes the transferer's seat, stasis-refer.ts); `ari-only` leaves every transfer to the
// application (ChannelTransfer, transfers.ts). Write-only, as in Asterisk; per call.
import type { TechnologyFunction } from '../../core/channels/technology.ts';
import { InvalidError } from '../../core/errors.ts';
import { SipCall } from './call.ts';

export type TransferHandling = 'core' | 'ari-only';

/** Calls whose handling was written; the rest use the default (`core`). */
const chosen = new WeakMap<SipCall, TransferHandling>();

export function transferHandlingOf(call: SipCall): TransferHandling {
  return chosen.get(call) ?? 'core';
}

export const transferHandlingFunction: TechnologyFunction = {
  name: 'PJSIP_TRANSFER_HANDLING',
  syntax: 'PJSIP_TRANSFER_HANDLING()',
  summary: 'Write `ari-only` to leave a REFER on this Stasis channel to the application (ChannelTransfer); `core` or empty (default): blind transfers from a bridge are carried out by Patchbay.',
  docsSection: 'SIP headers',
  write(call, value) {
    const channel = call.channel;
    if (!channel) throw new InvalidError('PJSIP_TRANSFER_HANDLING() needs a channel');
    if (!(channel.driver instanceof SipCall)) throw new InvalidError(`Cannot call PJSIP_TRANSFER_HANDLING on a non-PJSIP channel ${channel.name}`);
    const handling = value.trim();
    if (handling === '' || handling === 'core') chosen.set(channel.driver, 'core');
    else if (handling === 'ari-only') chosen.set(channel.driver, 'ari-only');
    else throw new InvalidError(`Cannot set unknown transfer handling '${handling.slice(0, 32)}'`);
  },
};
