// What the transaction-layer tests make in each test (a stack on shortened timers, raw UDP peers,
// sockets of their own) and close after it, the last made first, whether the test passed or not.
import { afterEach } from 'node:test';
import { UdpPeer, startStack, type Stack } from '../helpers.ts';
import type { TransactionUser } from '../../../src/sip/transaction/index.ts';

export interface PerTestStacks {
  /** A stack whose TU ignores requests unless `tu` says otherwise; closed after the test. */
  stack(tu?: Partial<TransactionUser>, options?: Parameters<typeof startStack>[1]): Promise<Stack>;
  /** A raw UDP peer on 127.0.0.1; closed after the test. */
  peer(): Promise<UdpPeer>;
  /** Runs `close` after the current test (before what was registered earlier). */
  closeAfterTest(close: () => unknown): void;
}

/** Registers the `afterEach` that closes what each test of this file made. */
export function stacksClosedAfterEachTest(): PerTestStacks {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  const closeAfterTest = (close: () => unknown): void => void cleanups.push(close);
  return {
    async stack(tu = {}, options = {}) {
      const s = await startStack({ onRequest: () => undefined, ...tu }, options);
      closeAfterTest(() => s.close());
      return s;
    },
    async peer() {
      const p = await new UdpPeer().start();
      closeAfterTest(() => p.close());
      return p;
    },
    closeAfterTest,
  };
}
