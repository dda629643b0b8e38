// Sounds: the prompts in the configured sound directories (src/core/sounds.ts), by id, language
// and format. As Asterisk does, a list that matches nothing and an unknown id are both 404.
import { NotFoundError } from '../../core/errors.ts';
import { defineHandlers } from '../handler.ts';

export const soundsHandlers = defineHandlers('sounds', {
  list: ({ lang, format }, { core }) => {
    const sounds = core.sounds.list({ lang: lang || undefined, format: format || undefined });
    if (sounds.length === 0) throw new NotFoundError('No sounds found that matched the query');
    return sounds;
  },

  get: ({ soundId }, { core }) => {
    try {
      return core.sounds.get(soundId);
    } catch (error) {
      if (error instanceof NotFoundError) throw new NotFoundError('Sound not found');
      throw error;
    }
  },
});
