// The core as the server runs it: the kernel (src/core/kernel.ts) composed with the dialplan
// executor and the per-core registry of dialplan functions, the floor above it that the kernel
// knows only through its abstract members. Channel technologies are handed over by the server
// (src/server.ts); they add their functions, applications and device states through their
// context, never by being named here.
import { Kernel, type CoreOptions } from '../core/kernel.ts';
import { MODULE_NAMES } from '../core/builtin-modules.ts';
import type { Channel } from '../core/channels/channel.ts';
import type { TechnologyApplication, TechnologyFunction } from '../core/channels/technology.ts';
import type { TextMessage } from '../core/messages.ts';
import type { VariableAssignment } from '../core/variable-limits.ts';
import { checkDialplan } from '../pbx/dialplan-check.ts';
import { FUNCTIONS_WITH_OUTSIDE_EFFECTS, FunctionRegistry } from '../pbx/function-registry.ts';
import { registerDialplanApplications } from '../pbx/apps/index.ts';
import { registerApplicationModules } from '../pbx/application-modules.ts';
import { MessageDialplans } from '../pbx/dialplan-message.ts';
import { Pbx } from '../pbx/pbx.ts';
import { gosubDepth } from '../pbx/gosub-stack.ts';
import { applyVariables } from './originate.ts';

export type { CoreOptions } from '../core/kernel.ts';

export class Core extends Kernel {
  /** This core's dialplan functions (every channel carries it as `channel.functions`). */
  readonly functions: FunctionRegistry;
  /** The dialplan executor and its applications. */
  readonly pbx: Pbx;
  /** Received messages run through the dialplan (an endpoint's message_context). */
  readonly #messageDialplans: MessageDialplans;

  constructor(options: CoreOptions) {
    const functions = new FunctionRegistry();
    super({ ...options, functions });
    this.functions = functions;
    const broadcasts = this.broadcasts;
    const modules = this.modules;
    this.pbx = new Pbx({
      channels: this.channels,
      stasis: this.stasis,
      log: this.log,
      globals: this.globalVars,
      dialplan: () => this.dialplan,
      messages: this.messages,
      playbacks: this.playbacks,
      recordings: this.recordings,
      astdb: () => this.openAstdb,
      get broadcasts() {
        return modules.isRunning(MODULE_NAMES.stasisBroadcast) ? broadcasts : undefined;
      },
      // The technology's word first (a Local device is available when its extension exists), as ChanIsAvail always did.
      deviceState: (device) => this.technologies.deviceState(device) ?? this.derivedDeviceStates.state(device),
      runSubroutine: (channel, target) => this.pbx.runSubroutine(channel, target),
      runSubroutineWithin: (channel, target) => this.pbx.runSubroutineWithin(channel, target),
      startDialplan: (channel) => this.pbx.start(channel),
      hangupExtensionIn: (channel, context) => this.pbx.hangupExtensionIn(channel, context),
      bridges: this.bridges,
      features: this.bridgeFeatures,
      records: this.records,
      parking: this.parking,
      musicOnHold: {
        start: (channel, mohClass) => this.moh.startOnChannel(this.generators, channel, mohClass),
        stop: (channel) => this.moh.stopOnChannel(this.generators, channel),
      },
    });
    registerDialplanApplications(this.pbx);
    registerApplicationModules(this.modules, this.pbx);
    functions.attach({
      globals: this.globalVars,
      dialplan: () => this.dialplan,
      variable: (channel, name) => this.pbx.variable(channel, name),
      findChannel: (nameOrId) => this.channels.get(nameOrId),
      astdb: () => this.openAstdb,
      deviceStates: this.deviceStates,
      extensionStates: this.extensionStates,
      shared: new WeakMap(),
      recentHangups: this.recentHangups,
      records: this.records,
      hangupHandlers: this.pbx.hangupHandlers,
    });
    this.records.cdr.inSubroutine = (id) => {
      const channel = this.channels.get(id);
      return channel !== undefined && gosubDepth(channel) > 0;
    };
    this.records.cdr.inHangupLogic = (id) => this.pbx.inHangupLogic(id);
    this.stasis.onContinue((channel) => this.pbx.start(channel));
    this.#messageDialplans = new MessageDialplans(this.channels, (channel) => this.pbx.start(channel));
  }

  protected startDialplan(channel: Channel): void {
    this.pbx.start(channel);
  }

  protected runMessageDialplan(message: TextMessage, location: { readonly context: string; readonly exten: string }): void {
    this.#messageDialplans.run(message, location);
  }

  protected applyVariables(channel: Channel, assignments: readonly VariableAssignment[]): void {
    applyVariables(channel, assignments);
  }

  protected registerTechnologyFunction(fn: TechnologyFunction): () => void {
    return this.functions.register(fn);
  }

  protected registerTechnologyApplication(application: TechnologyApplication): () => void {
    return this.pbx.register(application);
  }

  protected checkDialplan(): void {
    const parsed = this.parsedDialplan;
    if (!parsed) return;
    const check = checkDialplan(parsed, {
      isApplication: (name) => this.pbx.application(name) !== undefined,
      isFunction: (name) => this.functions.has(name),
      outsideFunctions: FUNCTIONS_WITH_OUTSIDE_EFFECTS,
      checkApplicationData: (name, data) => this.pbx.application(name)?.checkData?.(data) ?? [],
    });
    for (const warning of check.warnings) this.log.warn(warning);
    if (check.warnings.length > 0) this.log.warn(check.summary);
    else this.log.info(check.summary);
  }
}
