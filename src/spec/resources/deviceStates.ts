// Device states: application-controlled (Stasis:) device states, and reading any device state.
import type { ResourceDecl } from '../types.ts';

const deviceName = { name: 'deviceName', description: 'Name of the device.', in: 'path', dataType: 'string', required: true } as const;

export const deviceStates = {
  name: 'deviceStates',
  description: 'Device state resources',
  models: ['DeviceState'],
  operations: [
    {
      nickname: 'list',
      method: 'GET',
      path: '/deviceStates',
      summary: 'List the application-controlled device states.',
      since: ['12.0.0'],
      params: [],
      responseClass: 'List[DeviceState]',
      errors: [],
    },
    {
      nickname: 'get',
      method: 'GET',
      path: '/deviceStates/{deviceName}',
      summary: 'Read the state of a device.',
      since: ['12.0.0'],
      params: [deviceName],
      responseClass: 'DeviceState',
      errors: [],
    },
    {
      nickname: 'update',
      method: 'PUT',
      path: '/deviceStates/{deviceName}',
      summary: 'Create or change an application-controlled device state.',
      since: ['12.0.0'],
      params: [
        deviceName,
        {
          name: 'deviceState',
          description: 'New state of the device.',
          in: 'query',
          dataType: 'string',
          required: true,
          allowedValues: ['NOT_INUSE', 'INUSE', 'BUSY', 'INVALID', 'UNAVAILABLE', 'RINGING', 'RINGINUSE', 'ONHOLD'],
        },
      ],
      responseClass: 'void',
      errors: [
        { code: 404, reason: 'Device name is empty.' },
        { code: 409, reason: 'Device is not controlled by applications (no Stasis: prefix).' },
        // Patchbay: 503 beyond max_device_states.
        { code: 503, reason: 'Too many application-controlled device states (max_device_states).' },
      ],
    },
    {
      nickname: 'delete',
      method: 'DELETE',
      path: '/deviceStates/{deviceName}',
      summary: 'Destroy an application-controlled device state.',
      since: ['12.0.0'],
      params: [deviceName],
      responseClass: 'void',
      errors: [
        { code: 404, reason: 'Device name is empty.' },
        { code: 409, reason: 'Device is not controlled by applications (no Stasis: prefix).' },
      ],
    },
  ],
} as const satisfies ResourceDecl;
