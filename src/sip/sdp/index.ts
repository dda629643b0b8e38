// SDP for the SIP technology: readSdp() for any remote body, offer/answer on top of it.
export * from './session.ts';
export * from './offer-answer.ts';
export * from './codec-preference.ts';
export * from './crypto.ts';
export * from './sdes.ts';
