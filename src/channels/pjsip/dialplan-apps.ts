// SIPAddHeader(Header: value) and SIPRemoveHeader([Header:]), chan_sip's applications, kept for
// dialplans written for it: SIPAddHeader stores `Header: value` in the first free
// `__SIPADDHEADERnn` variable (nn = 01..32), which every channel the caller dials inherits; a PJSIP
// channel's outgoing INVITE carries the header of each SIPADDHEADER variable it has (call.ts).
// SIPRemoveHeader unsets those whose value begins with its argument, or all of them.
import type { Channel } from '../../core/channels/channel.ts';
import { checkAddableHeaderName, checkHeaderValue, MAX_ADDED_SIP_HEADERS } from './headers.ts';
import type { TechnologyApplication } from '../../core/channels/technology.ts';

const VARIABLE = /^_{0,2}SIPADDHEADER/i;

function slotName(slot: number): string {
  return `SIPADDHEADER${String(slot).padStart(2, '0')}`;
}

function isTaken(channel: Channel, bare: string): boolean {
  return channel.getVariable(bare) !== undefined || channel.getVariable(`_${bare}`) !== undefined || channel.getVariable(`__${bare}`) !== undefined;
}

export const sipAddHeader: TechnologyApplication = {
  name: 'SIPAddHeader',
  synopsis: 'Adds a `Header: value` line to the INVITE of the SIP channels this channel dials next (__SIPADDHEADERnn)',
  execute(channel, _args, services, rawData) {
    const colon = rawData.indexOf(':');
    const name = colon < 0 ? '' : rawData.slice(0, colon).trim();
    const value = colon < 0 ? '' : rawData.slice(colon + 1).trim();
    try {
      checkAddableHeaderName(name);
      checkHeaderValue(name, value);
    } catch (error) {
      services.log.warn({ channel: channel.name }, `SIPAddHeader: header not added: ${(error as Error).message}`);
      return 'next';
    }
    for (let slot = 1; slot <= MAX_ADDED_SIP_HEADERS; slot++) {
      const bare = slotName(slot);
      if (isTaken(channel, bare)) continue;
      channel.setVariable(`__${bare}`, `${name}: ${value}`);
      return 'next';
    }
    services.log.warn({ channel: channel.name }, `SIPAddHeader: too many SIP headers added, at most ${MAX_ADDED_SIP_HEADERS}`);
    return 'next';
  },
};

export const sipRemoveHeader: TechnologyApplication = {
  name: 'SIPRemoveHeader',
  synopsis: 'Removes headers added with SIPAddHeader: those beginning with the argument (`X-Foo:`), or all',
  execute(channel, _args, _services, rawData) {
    const prefix = rawData.trim().toLowerCase();
    for (const variable of channel.variableNames()) {
      if (!VARIABLE.test(variable)) continue;
      const value = channel.getVariable(variable) ?? '';
      if (prefix === '' || value.toLowerCase().startsWith(prefix)) channel.setVariable(variable, undefined);
    }
    return 'next';
  },
};
