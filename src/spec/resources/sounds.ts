// Sounds: the sound files installed on the server.
import type { ResourceDecl } from '../types.ts';

export const sounds = {
  name: 'sounds',
  description: 'Sound resources',
  models: ['FormatLangPair', 'Sound'],
  operations: [
    {
      nickname: 'list',
      method: 'GET',
      path: '/sounds',
      summary: 'List the installed sounds.',
      since: ['12.0.0'],
      params: [
        { name: 'lang', description: 'Only sounds available in this language.', in: 'query', dataType: 'string' },
        { name: 'format', description: 'Only sounds available in this format.', in: 'query', dataType: 'string' },
      ],
      responseClass: 'List[Sound]',
      // Asterisk answers this 404 without declaring it.
      errors: [{ code: 404, reason: 'No sound matches the lang/format filters.' }],
    },
    {
      nickname: 'get',
      method: 'GET',
      path: '/sounds/{soundId}',
      summary: 'Describe one sound.',
      since: ['12.0.0'],
      params: [{ name: 'soundId', description: 'Id of the sound.', in: 'path', dataType: 'string', required: true }],
      responseClass: 'Sound',
      // Asterisk answers this 404 without declaring it.
      errors: [{ code: 404, reason: 'Sound not found.' }],
    },
  ],
} as const satisfies ResourceDecl;
