// What the record engines know of a live channel, kept up to date from the channel snapshot every
// event carries: Asterisk's engines work from the same snapshots (struct ast_channel_snapshot).
import type { Model } from '../../spec/index.ts';
import type { AmaFlags } from './record.ts';

/** `Chained`: the record type the CDR engine keeps in `chain` (a parameter, so that this file needs none of the engine's types). */
export class ChannelView<Chained = unknown> {
  readonly id: string;
  name: string;
  callerName = '';
  callerNumber = '';
  rdnis = '';
  accountcode = '';
  linkedid: string;
  /** ms since the epoch. */
  readonly createdAt: number;
  state = '';
  context = '';
  exten = '';
  priority = 0;
  app = '';
  data = '';
  /** Created by Dial() for a caller (AST_FLAG_OUTGOING without ORIGINATED): never party A beside a caller. */
  dialed = false;
  hangupCause = 0;
  dead = false;
  amaflags: AmaFlags = 'DOCUMENTATION';
  /**
   * The CDR engine's: this channel's records as party A, oldest first (Asterisk's chain under
   * active_cdrs_master). Held here rather than in a table of its own beside the engine's table of
   * views: a second table keyed by channel grew, shrank and was re-hashed as calls came and went.
   */
  chain: Chained[] = [];

  constructor(snapshot: Model<'Channel'>, linkedid: string, now: number) {
    this.id = snapshot.id;
    this.name = snapshot.name;
    this.linkedid = linkedid;
    const created = Date.parse(snapshot.creationtime);
    this.createdAt = Number.isFinite(created) ? created : now;
    this.update(snapshot);
  }

  /** Takes the snapshot's fields; returns whether the dialplan position moved to another application (Asterisk's CEP change). */
  update(snapshot: Model<'Channel'>): boolean {
    this.name = snapshot.name;
    this.callerName = snapshot.caller.name;
    this.callerNumber = snapshot.caller.number;
    this.rdnis = snapshot.caller_rdnis ?? '';
    this.accountcode = snapshot.accountcode;
    this.state = snapshot.state;
    const plan = snapshot.dialplan;
    // snapshot_cep_changed: a new application at a new place (a dialplan step), not a repeat report.
    const moved =
      plan.app_name !== this.app &&
      !/^appdial/i.test(plan.app_name) &&
      (plan.context !== this.context || plan.exten !== this.exten || plan.priority !== this.priority);
    this.context = plan.context;
    this.exten = plan.exten;
    this.priority = plan.priority;
    if (!/^appdial/i.test(plan.app_name) || this.app === '') {
      this.app = plan.app_name;
      this.data = plan.app_data;
    }
    return moved;
  }

  get answered(): boolean {
    return this.state === 'Up';
  }
}

/** Who of two parties is party A (cdr_object_pick_party_a): not a dialed one, then the party-A flag, then the older. */
export function firstParty(left: ChannelView, leftFlag: boolean, right: ChannelView, rightFlag: boolean): 'left' | 'right' {
  if (!left.dialed && right.dialed) return 'left';
  if (left.dialed && !right.dialed) return 'right';
  if (leftFlag && !rightFlag) return 'left';
  if (!leftFlag && rightFlag) return 'right';
  return right.createdAt < left.createdAt ? 'right' : 'left';
}
