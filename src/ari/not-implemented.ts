// The operations whose telephony core is not built yet. Each answers
// `501 {"message":"Not implemented: <nickname>"}`; a test keeps this list equal to the set of
// declared operations without a handler, so removing a row means landing its handler.
import type { ResourceName } from '../spec/index.ts';

export const NOT_IMPLEMENTED: Partial<Record<ResourceName, readonly string[]>> = {
  // Every declared operation has its handler now.
};
