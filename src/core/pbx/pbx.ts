// The dialplan executor: walks a channel through its context/extension/priorities, running each
// step's application with substituted arguments and raising ChannelDialplan as it goes.
import { CAUSE } from '../channels/causes.ts';
import type { Channel } from '../channels/channel.ts';
import { splitArgs } from '../dialplan/args.ts';
import { substitute } from '../dialplan/substitute.ts';
import type { DialplanApplication } from './application.ts';
import { readChannelFunction } from './functions.ts';
import type { PbxServices } from './services.ts';

/** Steps run without a pause before the executor yields, so a dialplan loop cannot starve the server. */
const STEPS_BEFORE_YIELD = 64;

export class Pbx {
  private readonly applications = new Map<string, DialplanApplication>();
  private readonly running = new WeakSet<Channel>();

  constructor(private readonly services: PbxServices) {}

  register(application: DialplanApplication): void {
    this.applications.set(application.name.toLowerCase(), application);
  }

  application(name: string): DialplanApplication | undefined {
    return this.applications.get(name.toLowerCase());
  }

  /** Starts executing at the channel's location; returns at once. */
  start(channel: Channel): void {
    if (this.running.has(channel)) return;
    void this.run(channel).catch((err: unknown) => {
      this.services.log.error({ err, channel: channel.name }, 'dialplan execution failed');
      channel.hangup(CAUSE.failure);
    });
  }

  /** Substitutes `${...}` and `$[...]` in application data using the channel's variables. */
  substitute(channel: Channel, text: string): string {
    return substitute(
      text,
      (name) => this.variable(channel, name),
      (name, args) => readChannelFunction(channel, name, args),
    );
  }

  /** A variable as the dialplan sees it: channel variables, then the built-ins, then globals. */
  variable(channel: Channel, name: string): string | undefined {
    // Inheritable variables (`_NAME`, `__NAME`) answer to their bare name, as in Asterisk.
    return (
      channel.getVariable(name) ??
      channel.getVariable(`__${name}`) ??
      channel.getVariable(`_${name}`) ??
      builtinVariable(channel, name) ??
      this.services.globals.get(name)
    );
  }

  private async run(channel: Channel): Promise<void> {
    this.running.add(channel);
    try {
      let steps = 0;
      while (!channel.hangingUp) {
        const { context, exten, priority } = channel.location;
        const step = this.services.dialplan().find(context, exten, priority, channel.caller.number || undefined);
        if (!step) {
          // Falling off the end of the dialplan hangs the channel up, as in Asterisk.
          this.services.log.debug({ channel: channel.name, context, exten, priority }, 'no more dialplan steps');
          break;
        }
        const data = this.substitute(channel, step.appData);
        // The channel stays where it was sent: the dialed digits (not the matching pattern) and the
        // context searched (not an included one), so ${EXTEN} and ${CONTEXT} read as in Asterisk.
        channel.setDialplan({ context, exten, priority: step.priority, appName: step.app, appData: data });
        // Asterisk's verbose line; the level is checked first so a dialplan loop at `info` builds nothing.
        if (this.services.log.isLevelEnabled('debug')) {
          this.services.log.debug({ channel: channel.name }, `Executing [${exten}@${context}:${step.priority}] ${step.app}(${data})`);
        }
        const application = this.application(step.app);
        let outcome;
        if (!application) {
          this.services.log.warn({ channel: channel.name, app: step.app }, 'dialplan application not found');
          outcome = 'stop' as const;
        } else {
          outcome = await application.execute(channel, splitArgs(data), this.services, data);
        }
        if (outcome === 'stop') break;
        if (outcome === 'next') channel.setLocation({ priority: channel.location.priority + 1 });
        if (++steps % STEPS_BEFORE_YIELD === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.running.delete(channel);
    }
    if (!channel.hangingUp && !channel.stasis) channel.hangup(CAUSE.normal);
  }
}

/** Built-in variables that are another name for a CHANNEL() field (`${EXTEN}` is `CHANNEL(exten)`). */
const BUILTIN_CHANNEL_FIELDS: ReadonlyMap<string, string> = new Map([
  ['CHANNEL', 'name'],
  ['UNIQUEID', 'uniqueid'],
  ['LINKEDID', 'linkedid'],
  ['CONTEXT', 'context'],
  ['EXTEN', 'exten'],
]);

function builtinVariable(channel: Channel, name: string): string | undefined {
  if (name === 'PRIORITY') return String(channel.location.priority);
  const field = BUILTIN_CHANNEL_FIELDS.get(name);
  return field === undefined ? undefined : readChannelFunction(channel, 'CHANNEL', field);
}
