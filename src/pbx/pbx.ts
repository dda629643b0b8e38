// The dialplan executor: walks a channel through its context/extension/priorities, running each
// step's application with substituted arguments and raising ChannelDialplan as it goes.
import { CAUSE, SOFT_HANGUP } from '../core/channels/causes.ts';
import type { Channel, HangupLogic } from '../core/channels/channel.ts';
import { splitArgs } from '../dialplan/args.ts';
import { substitute } from '../dialplan/substitute.ts';
import type { DialplanStep } from '../dialplan/dialplan.ts';
import type { AppOutcome, DialplanApplication } from './application.ts';
import { builtinVariable, readChannelFunction } from './function-registry.ts';
import { gosubDepth, popFrame, pushFrame, writeLocal } from './gosub-stack.ts';
import { splitTarget } from './apps/gosub.ts';
import { resolveGoto } from './apps/goto.ts';
import type { PbxServices } from './application-services.ts';
import { writeTimeout } from './timeouts.ts';
import { defaultHangupCause } from './hangup-cause.ts';
import { HangupHandlers, MAX_HANGUP_HANDLERS } from './hangup-handlers.ts';

/** Steps run without a pause before the executor yields, so a dialplan loop cannot starve the server. */
const STEPS_BEFORE_YIELD = 64;
/** Steps the `h` extension, and each hang-up handler, may run after a hangup (it cannot wait on the channel, only compute). */
const MAX_HANGUP_STEPS = 200;
/**
 * The longest a hung-up channel waits for its `h` extension and hang-up handlers, together, before
 * it is destroyed all the same: applications return at once on a hung-up channel, so only a fault
 * (or a handler that loops) holds it this long.
 */
const HANGUP_LOGIC_LIMIT_MS = 10_000;
/** Steps a subroutine run outside the dialplan (a pre-dial handler) may take before it is abandoned. */
const MAX_SUBROUTINE_STEPS = 1000;
/** Where the Return of such a subroutine lands: a context no dialplan can name (it has a NUL). */
const SUBROUTINE_END = { context: '\u0000subroutine-end', exten: 'return', priority: 1 } as const;

/**
 * The cause a call ends with when the dialplan names an application Patchbay does not have:
 * 38 (AST_CAUSE_FAILURE, "Network out of order"), so that it reads as the server's failure and
 * not as a normal end of call in CDRs, ChannelDestroyed and ${HANGUPCAUSE}.
 */
export const UNKNOWN_APPLICATION_CAUSE = CAUSE.failure;

/**
 * Where a channel's `h` extension starts: its first step and the context it was found in. Found
 * once per hang-up and handed on, so the extension is not looked up again to be run.
 */
interface HangupStart {
  readonly step: DialplanStep;
  readonly context: string;
}

/**
 * A hung-up channel's `h` extension and hang-up handlers to run before it is destroyed: the timer
 * that destroys it all the same.
 */
interface PendingHangupLogic {
  readonly timer: NodeJS.Timeout;
  /** The timer fired: the channel was destroyed without waiting for the extension. */
  expired: boolean;
  /** The `h` extension, which runs first (a dialplan run owns the channel and its context has one). */
  readonly start: HangupStart | undefined;
  /** Begun already: whoever finds it pending (the run's end, a subroutine's, a timer) runs it once. */
  started: boolean;
}

export class Pbx {
  private readonly applications = new Map<string, DialplanApplication>();
  private readonly running = new WeakSet<Channel>();
  /** Channels a dialplan run (start()) owns, which runs their hang-up logic once its loop ends. */
  private readonly owned = new WeakSet<Channel>();
  /** Channels moved elsewhere while an application ran (TIMEOUT(absolute) to `T`). */
  private readonly redirected = new WeakSet<Channel>();
  /** Channels running each application right now (by lower-case name): its module's use count. */
  private readonly users = new Map<string, number>();
  /**
   * Hung-up channels whose `h` extension runs before they are destroyed: the timer that destroys
   * them all the same if it has not ended by then (expired once it did).
   */
  private readonly hangupLogicPending = new WeakMap<Channel, PendingHangupLogic>();
  /** Ids of the channels running their `h` extension before being destroyed (usually none). */
  private readonly inHangupLogicIds = new Set<string>();
  /** Channels no run owns that run the `h` extension of this context when they hang up (Dial's e). */
  private readonly hangupContexts = new WeakMap<Channel, string>();
  /** Told by a channel this executor runs once its hang-up is announced (one object for all of them). */
  private readonly hangupLogic: HangupLogic = { takesOver: (channel) => this.takeHangupOver(channel) };
  /**
   * The channels' hang-up handler stacks (CHANNEL(hangup_handler_push)). A channel given its first
   * handler is given this executor's hang-up logic too, so that one no dialplan runs (a Stasis
   * channel, a Dial() callee) runs them before it is destroyed, as Asterisk's ast_hangup does.
   */
  readonly hangupHandlers = new HangupHandlers((channel) => {
    if (!channel.hangingUp) channel.setHangupLogic(this.hangupLogic);
  });

  constructor(private readonly services: PbxServices) {
    // The executor's own writable functions: LOCAL() lives on the Gosub stack, TIMEOUT() here.
    services.channels.functions.registerWriter('LOCAL', (channel, args, value) => writeLocal(channel, args, value));
    services.channels.functions.registerWriter('TIMEOUT', (channel, args, value) =>
      writeTimeout(channel, args, value, (timedOut) => this.absoluteTimeout(timedOut)),
    );
  }

  /** Adds an application (a technology's, or a built-in one); returns its removal. */
  register(application: DialplanApplication): () => void {
    const key = application.name.toLowerCase();
    this.applications.set(key, application);
    return () => {
      if (this.applications.get(key) === application) this.applications.delete(key);
    };
  }

  application(name: string): DialplanApplication | undefined {
    return this.applications.get(name.toLowerCase());
  }

  /** How many channels are running the application now (Asterisk counts them as its module's users). */
  usersOf(name: string): number {
    return this.users.get(name.toLowerCase()) ?? 0;
  }

  /** The registered applications' names, sorted. */
  applicationNames(): string[] {
    return [...this.applications.values()].map((application) => application.name).sort((a, b) => a.localeCompare(b));
  }

  /** Reads a dialplan function as application data sees it (LOCAL and TIMEOUT included: the registry has them). */
  readFunction(channel: Channel, name: string, args: string): string | undefined {
    return readChannelFunction(channel, name, args);
  }

  /**
   * TIMEOUT(absolute) expired: to the `T` extension of the channel's context when there is one
   * (the application running is interrupted as a hangup would), else the call ends.
   */
  private absoluteTimeout(channel: Channel): void {
    if (channel.hangingUp) return;
    const { context } = channel.location;
    this.services.log.info({ channel: channel.name }, `Channel '${channel.name}' timed out (TIMEOUT(absolute))`);
    if (this.running.has(channel) && !channel.stasis && this.services.dialplan().exists(context, 'T', 1, channel.caller.number || undefined)) {
      channel.setLocation({ exten: 'T', priority: 1 });
      this.redirected.add(channel);
      channel.interruptDialplan();
      return;
    }
    channel.hangup(CAUSE.normal);
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
    // Most application data has nothing to substitute: no resolver closures for it.
    if (!text.includes('$')) return text;
    return substitute(
      text,
      (name) => this.variable(channel, name),
      (name, args) => this.readFunction(channel, name, args),
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
    this.owned.add(channel);
    channel.setDialplanOwned(true);
    channel.setHangupLogic(this.hangupLogic);
    try {
      let steps = 0;
      while (!channel.hangingUp) {
        const { context, exten, priority } = channel.location;
        const callerId = channel.caller.number || undefined;
        const dialplan = this.services.dialplan();
        const step = dialplan.find(context, exten, priority, callerId);
        if (!step) {
          // An extension that does not exist at all goes to `i` (then `e`), as pbx.c does.
          if (priority === 1 && !dialplan.exists(context, exten, 1, callerId)) {
            const handler = ['i', 'e'].find((special) => special !== exten && dialplan.exists(context, special, 1, callerId));
            if (handler) {
              this.services.log.info({ channel: channel.name }, `Sent into invalid extension '${exten}' in context '${context}' on ${channel.name}`);
              channel.setSystemVariable('INVALID_EXTEN', exten);
              channel.setLocation({ exten: handler, priority: 1 });
              continue;
            }
            this.services.log.warn(
              { channel: channel.name, context, exten },
              `Channel '${channel.name}' sent to invalid extension but no invalid handler: context,exten,priority=${context},${exten},${priority}`,
            );
            break;
          }
          // Falling off the end of the dialplan hangs the channel up, as in Asterisk.
          this.services.log.debug({ channel: channel.name, context, exten, priority }, 'no more dialplan steps');
          break;
        }
        const outcome = await this.execute(channel, step);
        if (this.redirected.has(channel)) {
          // Moved while the application ran (TIMEOUT(absolute) to `T`): whatever it said no longer counts.
          this.redirected.delete(channel);
          continue;
        }
        if (outcome === 'stop') break;
        if (outcome === 'next') channel.setLocation({ priority: channel.location.priority + 1 });
        if (++steps % STEPS_BEFORE_YIELD === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      // Falling off the end keeps a cause Dial() left (a callee's busy), as Asterisk's hangupcause does.
      // Asterisk announces it as the soft hang-up that ends every dialplan run (APPUNLOAD).
      if (!channel.hangingUp && !channel.stasis) channel.hangup(defaultHangupCause(channel), { soft: SOFT_HANGUP.appUnload });
      // Still marked running, so a late start() cannot run the `h` extension a second time.
      const pending = this.hangupLogicPending.get(channel);
      if (pending) await this.runHangupLogic(channel, pending);
      // A channel whose hang-up the `h` extension could not take over (one in Stasis when it hung
      // up) still runs it, after it was destroyed (and after its handlers, which could), then the
      // handlers `h` may have pushed.
      if (!pending?.start && channel.hangingUp && !channel.stasis) {
        await this.runHangupExtension(channel);
        await this.runHangupHandlers(channel, () => false);
      }
    } finally {
      // A channel that leaves the dialplan alive keeps the hook while it has handlers to run.
      channel.setHangupLogic(this.hangupHandlers.has(channel) && !channel.hangingUp ? this.hangupLogic : undefined);
      this.owned.delete(channel);
      this.running.delete(channel);
      if (!channel.hangingUp) channel.setDialplanOwned(false);
    }
  }

  /** Runs one step: substitutes its data, raises ChannelDialplan, and runs its application. */
  private async execute(channel: Channel, step: DialplanStep): Promise<AppOutcome> {
    const { context, exten, appName: savedApp, appData: savedData } = channel.location;
    const data = this.substitute(channel, step.appData);
    // The channel stays where it was sent: the dialed digits (not the matching pattern) and the
    // context searched (not an included one), so ${EXTEN} and ${CONTEXT} read as in Asterisk.
    channel.setDialplan({ context, exten, priority: step.priority, appName: step.app, appData: data });
    // Asterisk's verbose line; the level is checked first so a dialplan loop at `info` builds nothing.
    if (this.services.log.isLevelEnabled('debug')) {
      this.services.log.debug({ channel: channel.name }, `Executing [${exten}@${context}:${step.priority}] ${step.app}(${data})`);
    }
    const application = this.application(step.app);
    if (!application) {
      // As pbx.c: the call ends. The load-time check has already named the application.
      this.services.log.warn(
        { channel: channel.name, app: step.app, file: step.file, line: step.line },
        `No application '${step.app}' for extension (${context}, ${exten}, ${step.priority}) at ${step.file}:${step.line}; hanging up ${channel.name}`,
      );
      channel.hangup(UNKNOWN_APPLICATION_CAUSE);
      return 'stop';
    }
    const key = application.name.toLowerCase();
    this.users.set(key, this.usersOf(key) + 1);
    try {
      return await application.execute(channel, splitArgs(data), this.services, data);
    } finally {
      // pbx_exec puts back the application it found (the next snapshot shows it, not this one).
      channel.setLocation({ appName: savedApp, appData: savedData });
      const left = this.usersOf(key) - 1;
      if (left > 0) this.users.set(key, left);
      else this.users.delete(key);
    }
  }

  /**
   * Runs a subroutine on a channel no dialplan is running on (Dial's b() pre-dial handler on a
   * callee): from `target` until its Return, bounded in steps; the channel's location is left as
   * it was. False when the destination does not exist.
   */
  async runSubroutine(channel: Channel, target: string): Promise<boolean> {
    if (this.running.has(channel) || channel.hangingUp) return false;
    this.running.add(channel);
    try {
      return await this.runRoutine(channel, target, MAX_SUBROUTINE_STEPS, () => channel.hangingUp, 'subroutine');
    } finally {
      this.running.delete(channel);
      // The channel hung up meanwhile with hang-up handlers to run: their turn now the subroutine is done.
      const pending = this.hangupLogicPending.get(channel);
      if (pending && !this.owned.has(channel)) void this.runHangupLogic(channel, pending);
    }
  }

  /**
   * Runs a subroutine on a channel whose dialplan run is in an application (Dial's B() on the
   * caller), as ast_app_exec_sub does: bounded in steps, the location put back after. False when
   * no run of this executor has the channel, or the destination does not exist.
   */
  async runSubroutineWithin(channel: Channel, target: string): Promise<boolean> {
    if (!this.owned.has(channel) || channel.hangingUp) return false;
    return this.runRoutine(channel, target, MAX_SUBROUTINE_STEPS, () => channel.hangingUp, 'subroutine');
  }

  /**
   * A subroutine as app_stack's internal Gosub runs it: a frame with the arguments (${ARGn}), the
   * steps from `target` until its Return (at most `maxSteps`, stopping early when `stop` says so),
   * then the frames it left dropped and the channel's location put back. False when the
   * destination does not exist or the run failed.
   */
  private async runRoutine(channel: Channel, target: string, maxSteps: number, stop: () => boolean, what: string): Promise<boolean> {
    const { target: where, args } = splitTarget(target);
    const destination = resolveGoto(channel, this.services, where);
    if ('error' in destination) {
      this.services.log.warn({ channel: channel.name }, `${what} ${where} not run: ${destination.error}`);
      return false;
    }
    const saved = channel.location;
    const depth = gosubDepth(channel);
    try {
      pushFrame(channel, SUBROUTINE_END, args);
      channel.setLocation(destination);
      for (let steps = 1; steps <= maxSteps && !stop(); steps++) {
        const { context, exten, priority } = channel.location;
        if (context === SUBROUTINE_END.context) return true;
        const step = this.services.dialplan().find(context, exten, priority, channel.caller.number || undefined);
        if (!step) break;
        const outcome = await this.execute(channel, step);
        if (outcome === 'stop') break;
        if (outcome === 'next') channel.setLocation({ priority: channel.location.priority + 1 });
        if (steps % STEPS_BEFORE_YIELD === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      if (channel.location.context !== SUBROUTINE_END.context) {
        this.services.log.warn({ channel: channel.name }, `${what} ${where} ended without Return`);
      }
      return true;
    } catch (error) {
      this.services.log.warn({ err: error, channel: channel.name }, `${what} ${where} failed`);
      return false;
    } finally {
      // Frames the subroutine left (no Return) are dropped, restoring their ${ARGn}.
      while (gosubDepth(channel) > depth) popFrame(channel);
      channel.setLocation(saved);
    }
  }

  /**
   * A channel no dialplan runs (Dial's callee with option e) runs the `h` extension of `context`
   * when it hangs up, as Asterisk's after-bridge h exten: set on the channel then, before it is
   * destroyed. A run started on the channel meanwhile uses its own context instead.
   */
  hangupExtensionIn(channel: Channel, context: string): void {
    if (channel.hangingUp) return;
    this.hangupContexts.set(channel, context);
    channel.setHangupLogic(this.hangupLogic);
  }

  /**
   * A channel hung up with hang-up logic to run before it is destroyed: the `h` extension of the
   * context a dialplan run owning it is in (not running it already, nor held by Stasis), and its
   * hang-up handlers. The run finishes the hang-up once its loop ended (a channel no run owns
   * gets it run here), or a timer does if it never ends.
   */
  private takeHangupOver(channel: Channel): boolean {
    const owned = this.owned.has(channel);
    // A run whose channel is still in Stasis() (hung up by its Local partner) ends only once the
    // channel is destroyed: it runs `h` and the handlers after that instead (see run()).
    if (owned && channel.stasis) return false;
    const hangupContext = owned ? undefined : this.hangupContexts.get(channel);
    // Dial's e: the channel is put in the context whose `h` it runs, as ast_pbx_h_exten_run does.
    if (hangupContext !== undefined && channel.location.exten !== 'h') channel.setLocation({ context: hangupContext });
    const start = (owned || hangupContext !== undefined) && channel.location.exten !== 'h' ? this.hangupStart(channel) : undefined;
    if (!start && !this.hangupHandlers.has(channel)) return false;
    const expire = (): void => {
      pending.expired = true;
      this.inHangupLogicIds.delete(channel.id);
      this.services.log.warn({ channel: channel.name }, `the hang-up logic of ${channel.name} did not end in ${HANGUP_LOGIC_LIMIT_MS} ms: destroying the channel`);
      channel.finishHangup();
    };
    const pending: PendingHangupLogic = { timer: setTimeout(expire, HANGUP_LOGIC_LIMIT_MS), expired: false, start, started: false };
    pending.timer.unref();
    this.hangupLogicPending.set(channel, pending);
    // Asked from within the hang-up being carried out: the handlers run once it has been.
    if (!this.running.has(channel)) setImmediate(() => void this.runHangupLogic(channel, pending));
    return true;
  }

  /** The first step of the `h` extension of the context the channel is in, if it has one: the one lookup of a hang-up. */
  private hangupStart(channel: Channel): HangupStart | undefined {
    const { context } = channel.location;
    const step = this.services.dialplan().find(context, 'h', 1, channel.caller.number || undefined);
    return step && { step, context };
  }

  /**
   * As __ast_pbx_run then ast_hangup end a hung-up channel: the soft APPUNLOAD hang-up request (a
   * dialplan run's), the `h` extension, the hang-up handlers, then the channel is destroyed
   * (ChannelDestroyed, the CDR posted).
   */
  private async runHangupLogic(channel: Channel, pending: PendingHangupLogic): Promise<void> {
    if (pending.started) return;
    pending.started = true;
    try {
      if (!pending.expired) {
        channel.announceDialplanEnd();
        this.inHangupLogicIds.add(channel.id);
        // A shutdown may destroy the channel meanwhile (a second end()): the logic stops then.
        const abandoned = (): boolean => pending.expired || channel.destroyed;
        if (pending.start) await this.runHangupExtension(channel, pending.start, abandoned);
        await this.runHangupHandlers(channel, abandoned);
      }
    } catch (err) {
      this.services.log.warn({ err, channel: channel.name }, 'the hang-up logic failed');
    } finally {
      clearTimeout(pending.timer);
      this.hangupLogicPending.delete(channel);
      channel.finishHangup();
      this.inHangupLogicIds.delete(channel.id);
    }
  }

  /**
   * The channel's hang-up handlers, last pushed first, each taken off its stack as it starts (so
   * it runs at most once, and one pushed meanwhile runs too), as ast_pbx_hangup_handler_run.
   * Each is a subroutine of its own on the hung-up channel, bounded in steps.
   */
  private async runHangupHandlers(channel: Channel, abandoned: () => boolean): Promise<void> {
    let ran = 0;
    for (let handler = this.hangupHandlers.take(channel); handler !== undefined; handler = this.hangupHandlers.take(channel)) {
      // A handler that pushes a handler (itself, say) would keep the stack from ever emptying: at
      // most a full stack's worth run in one hang-up (Asterisk has no bound; its channel thread
      // would spin for ever).
      if (abandoned() || ran === MAX_HANGUP_HANDLERS) {
        if (!abandoned()) this.services.log.warn({ channel: channel.name }, `${channel.name} ran ${MAX_HANGUP_HANDLERS} hang-up handlers: the ones left are dropped`);
        this.hangupHandlers.wipe(channel, '');
        return;
      }
      ran++;
      this.services.log.debug({ channel: channel.name }, `${channel.name} runs hang-up handler ${handler}`);
      await this.runRoutine(channel, handler, MAX_HANGUP_STEPS, abandoned, 'hang-up handler');
      // A short handler awaits no I/O: without a turn of the loop between handlers, the 10 s timer
      // and every other call would wait for all of them.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Whether the channel runs its `h` extension or hang-up handlers before being destroyed now (its CDRs have ended then). */
  inHangupLogic(channelId: string): boolean {
    return this.inHangupLogicIds.size > 0 && this.inHangupLogicIds.has(channelId);
  }

  /**
   * The `h` extension of the context the call ended in, run after the hangup as Asterisk does
   * (applications that wait return at once on a hung-up channel). Bounded in steps, and stopped
   * when `abandoned` says the channel was destroyed without waiting for it. `found` is where the
   * extension starts when the hang-up was taken over; it counts while the channel is still in that
   * context (else the extension is looked up where the channel is now).
   */
  private async runHangupExtension(channel: Channel, found?: HangupStart, abandoned: () => boolean = () => false): Promise<void> {
    if (channel.location.exten === 'h') return;
    const start = found && found.context === channel.location.context ? found : this.hangupStart(channel);
    if (!start) return;
    const dialplan = this.services.dialplan();
    const callerId = channel.caller.number || undefined;
    channel.setLocation({ exten: 'h', priority: 1 });
    for (let steps = 0; steps < MAX_HANGUP_STEPS && !abandoned(); steps++) {
      const { context, exten, priority } = channel.location;
      const step = steps === 0 ? start.step : dialplan.find(context, exten, priority, callerId);
      if (!step) return;
      let outcome: AppOutcome;
      try {
        outcome = await this.execute(channel, step);
      } catch (err) {
        this.services.log.warn({ err, channel: channel.name }, 'the h extension failed');
        return;
      }
      if (outcome === 'stop') return;
      if (outcome === 'next') channel.setLocation({ priority: channel.location.priority + 1 });
    }
  }
}
