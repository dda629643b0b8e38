// Mailboxes whose message counts an ARI application maintains; persisted in the database.
import type { SqliteDatabase } from './database.ts';
import { NotFoundError, UnavailableError } from './errors.ts';

/** Default of `max_mailboxes`. */
export const DEFAULT_MAX_MAILBOXES = 10_000;

export interface MailboxSnapshot {
  readonly name: string;
  readonly old_messages: number;
  readonly new_messages: number;
}

/** Told the name of a mailbox whose counts were set or which was deleted. */
export type MailboxListener = (name: string) => void;

export class Mailboxes {
  private database: SqliteDatabase | undefined;
  /** Most mailboxes (`max_mailboxes`): each is a database row kept for good. */
  maxMailboxes = DEFAULT_MAX_MAILBOXES;
  readonly #listeners = new Set<MailboxListener>();

  /**
   * Message-waiting indications (SIP MWI) follow the counts: told after each update and delete,
   * whether or not the numbers changed (a listener compares). Returns the unsubscribe.
   */
  onChange(listener: MailboxListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The counts of a mailbox, undefined when there is no such mailbox (or the database is closed). */
  find(name: string): MailboxSnapshot | undefined {
    if (!this.database) return undefined;
    return this.database.prepare('SELECT name, old_messages, new_messages FROM mailboxes WHERE name = ?').get(name) as MailboxSnapshot | undefined;
  }

  #changed(name: string): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(name);
      } catch {
        // A listener's failure is its own; the counts are stored and the others still hear.
      }
    }
  }

  open(database: SqliteDatabase): void {
    this.database = database;
    database.exec('CREATE TABLE IF NOT EXISTS mailboxes (name TEXT PRIMARY KEY, old_messages INTEGER NOT NULL, new_messages INTEGER NOT NULL)');
  }

  close(): void {
    this.database = undefined;
  }

  private get db(): SqliteDatabase {
    if (!this.database) throw new Error('mailboxes are not open');
    return this.database;
  }

  list(): MailboxSnapshot[] {
    return this.db.prepare('SELECT name, old_messages, new_messages FROM mailboxes ORDER BY name').all() as MailboxSnapshot[];
  }

  get(name: string): MailboxSnapshot {
    const row = this.db.prepare('SELECT name, old_messages, new_messages FROM mailboxes WHERE name = ?').get(name) as MailboxSnapshot | undefined;
    if (!row) throw new NotFoundError(`Mailbox not found: ${name}`);
    return row;
  }

  update(name: string, oldMessages: number, newMessages: number): void {
    const exists = this.db.prepare('SELECT 1 FROM mailboxes WHERE name = ?').get(name) !== undefined;
    if (!exists) {
      const { n } = this.db.prepare('SELECT COUNT(*) AS n FROM mailboxes').get() as { n: number };
      if (n >= this.maxMailboxes) throw new UnavailableError(`Too many mailboxes: at most ${this.maxMailboxes} (max_mailboxes)`);
    }
    this.db
      .prepare('INSERT INTO mailboxes (name, old_messages, new_messages) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET old_messages = excluded.old_messages, new_messages = excluded.new_messages')
      .run(name, oldMessages, newMessages);
    this.#changed(name);
  }

  delete(name: string): void {
    if (this.db.prepare('DELETE FROM mailboxes WHERE name = ?').run(name).changes === 0) throw new NotFoundError(`Mailbox not found: ${name}`);
    this.#changed(name);
  }
}
