// The transaction layer's public face: the layer, its two kinds of transaction and their types.
export { TransactionLayer, type TransactionLayerOptions, type TransactionUser } from './layer.ts';
export { ClientTransaction, type ClientHandlers } from './client.ts';
export { ServerTransaction } from './server.ts';
export { buildAckForNon2xx, buildCancel, serverKey } from './keys.ts';
export { DEFAULT_TIMERS, type Retransmission2xx, type TimerSettings, type TransactionState } from './transaction.ts';
