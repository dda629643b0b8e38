// DBdel(family/key) and DBdeltree(family[/keytree]): removing astdb entries from the dialplan, as
// app_db does. Both carry on to the next priority whatever they found.
import { splitAstDbPath } from '../../core/astdb.ts';
import { InvalidError } from '../../core/errors.ts';
import type { DialplanApplication } from '../application.ts';

export const dbDel: DialplanApplication = {
  name: 'DBdel',
  synopsis: 'Deletes a key from the astdb (family/key)',
  execute(channel, _args, services, rawData) {
    const path = splitAstDbPath(rawData.trim());
    const db = services.astdb?.();
    if (!path || !db) {
      services.log.warn({ channel: channel.name, data: rawData.slice(0, 128) }, 'DBdel requires family/key');
      return 'next';
    }
    try {
      db.delete(path.family, path.key);
    } catch (error) {
      if (!(error instanceof InvalidError)) throw error;
      services.log.warn({ channel: channel.name }, `DBdel: ${error.message}`);
    }
    return 'next';
  },
};

export const dbDelTree: DialplanApplication = {
  name: 'DBdeltree',
  synopsis: 'Deletes a family, or a key tree below it, from the astdb',
  execute(channel, _args, services, rawData) {
    const text = rawData.trim();
    const slash = text.indexOf('/');
    const family = slash < 0 ? text : text.slice(0, slash);
    const keyTree = slash < 0 ? '' : text.slice(slash + 1);
    const db = services.astdb?.();
    if (family === '' || !db) {
      services.log.warn({ channel: channel.name, data: text.slice(0, 128) }, 'DBdeltree requires a family');
      return 'next';
    }
    try {
      db.deleteTree(family, keyTree);
    } catch (error) {
      if (!(error instanceof InvalidError)) throw error;
      services.log.warn({ channel: channel.name }, `DBdeltree: ${error.message}`);
    }
    return 'next';
  },
};
