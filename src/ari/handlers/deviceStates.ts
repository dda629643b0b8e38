// Device states: controlled `Stasis:` states and read access to every other device.
import { defineHandlers } from '../handler.ts';

export const deviceStatesHandlers = defineHandlers('deviceStates', {
  list: (_params, { core }) => core.deviceStates.list(),
  get: ({ deviceName }, { core }) => core.deviceStates.get(deviceName),
  update: ({ deviceName, deviceState }, { core }) => core.deviceStates.set(deviceName, deviceState),
  delete: ({ deviceName }, { core }) => core.deviceStates.delete(deviceName),
});
