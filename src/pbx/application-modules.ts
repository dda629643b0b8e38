// The dialplan applications as Asterisk packages them: one loadable module per `apps/app_*.c`
// (app_dial.so has Dial, app_stack.so Gosub and its kin, ...), so that apps and tests that look a
// module up by its Asterisk name find it. A module's use count is the channels running one of its
// applications, as Asterisk's pbx_exec counts module users; unloading one in use is refused (409),
// and unloading one that is idle takes its applications out of the dialplan until it is loaded again.
//
// Applications that are Asterisk's core (pbx_builtins: Answer, Goto, Wait, ...) have no module;
// nor do those whose module the kernel already registers (app_stasis.so, res_musiconhold.so,
// res_stasis_broadcast.so for StasisBroadcast: docs/differences.md).
import type { ModuleRegistry } from '../core/modules.ts';
import type { Pbx } from './pbx.ts';

interface ApplicationModule {
  readonly name: string;
  readonly applications: readonly string[];
}

/** Patchbay's applications that Asterisk 22 provides from a module of their own, with that module. */
export const APPLICATION_MODULES: readonly ApplicationModule[] = [
  { name: 'app_dial.so', applications: ['Dial'] },
  { name: 'app_echo.so', applications: ['Echo'] },
  { name: 'app_playback.so', applications: ['Playback'] },
  { name: 'app_read.so', applications: ['Read'] },
  { name: 'app_record.so', applications: ['Record'] },
  { name: 'app_mixmonitor.so', applications: ['MixMonitor', 'StopMixMonitor'] },
  { name: 'app_stack.so', applications: ['Gosub', 'GosubIf', 'Return', 'StackPop'] },
  { name: 'app_exec.so', applications: ['ExecIf'] },
  { name: 'app_sayunixtime.so', applications: ['SayUnixTime'] },
  { name: 'app_playtones.so', applications: ['PlayTones', 'StopPlayTones'] },
  { name: 'app_milliwatt.so', applications: ['Milliwatt'] },
  { name: 'app_senddtmf.so', applications: ['SendDTMF'] },
  { name: 'app_userevent.so', applications: ['UserEvent'] },
  { name: 'app_verbose.so', applications: ['Verbose', 'Log'] },
  { name: 'app_chanisavail.so', applications: ['ChanIsAvail'] },
  { name: 'app_cdr.so', applications: ['ResetCDR', 'NoCDR'] },
  { name: 'app_celgenuserevent.so', applications: ['CELGenUserEvent'] },
  { name: 'app_db.so', applications: ['DBdel', 'DBdeltree'] },
];

/** Registers each application module; loading it puts its applications in the executor. */
export function registerApplicationModules(modules: ModuleRegistry, pbx: Pbx): void {
  for (const module of APPLICATION_MODULES) {
    // The applications were registered with the executor before the modules load.
    const present = module.applications.map((name) => pbx.application(name)).filter((application) => application !== undefined);
    if (present.length === 0) continue;
    let removals: (() => void)[] = [];
    modules.register({
      name: module.name,
      description: `Dialplan application${module.applications.length > 1 ? 's' : ''}: ${module.applications.join(', ')}`,
      supportLevel: 'core',
      load: () => {
        removals = present.map((application) => pbx.register(application));
      },
      unload: () => {
        for (const remove of removals) remove();
        removals = [];
      },
      useCount: () => present.reduce((sum, application) => sum + pbx.usersOf(application.name), 0),
    });
  }
}
