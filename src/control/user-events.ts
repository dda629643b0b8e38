// What ARI's events resource asks of the core beyond delivering: a user event carries the
// snapshots of the objects it names (the object directory's), and a broadcast call is claimed
// only while res_stasis_broadcast runs (the module registry's). Named operations here, so the
// handlers do not consult two subsystems themselves.
import { parseEventSource, type Applications } from '../core/applications.ts';
import type { ChannelBroadcasts, ClaimResult } from '../core/broadcasts.ts';
import { MODULE_NAMES } from '../core/builtin-modules.ts';
import { InvalidError, NotFoundError, UnprocessableError } from '../core/errors.ts';
import type { ModuleRegistry } from '../core/modules.ts';
import type { ObjectDirectory, ObjectKind, ObjectSnapshots } from '../core/objects.ts';
import type { CoreEventOf } from '../spec/events.ts';
import { formatAriDate } from '../util/ari-date.ts';

export interface UserEventServices {
  readonly applications: Applications;
  readonly objects: ObjectDirectory;
}

export interface UserEventRequest {
  readonly eventName: string;
  readonly application: string;
  /** Event source URIs (`channel:<id>`, `bridge:<id>`, ...); empty entries are skipped. */
  readonly sources: readonly string[];
  readonly variables: Readonly<Record<string, unknown>>;
}

/** Puts a source's snapshot into the user event under its kind; false when the source does not exist. */
function attach<K extends ObjectKind>(event: CoreEventOf<'ChannelUserevent'>, kind: K, snapshot: ObjectSnapshots[K] | undefined): boolean {
  if (snapshot === undefined) return false;
  const sources: Partial<ObjectSnapshots> = event;
  sources[kind] = snapshot;
  return true;
}

/**
 * Sends ChannelUserevent to an application with the snapshots of the sources it names. An unknown
 * application is NotFoundError, a device state as a source InvalidError, a source that does not
 * exist UnprocessableError; nothing is sent then.
 */
export function sendUserEvent(services: UserEventServices, request: UserEventRequest): void {
  const { eventName, application } = request;
  if (!services.applications.get(application)) throw new NotFoundError(`Application not found: ${application}`);
  const event: CoreEventOf<'ChannelUserevent'> = {
    type: 'ChannelUserevent',
    timestamp: formatAriDate(),
    eventname: eventName,
    userevent: { ...request.variables, eventname: eventName },
  };
  for (const uri of request.sources) {
    if (uri === '') continue;
    const { kind, id } = parseEventSource(uri);
    if (kind === 'deviceState') throw new InvalidError(`Invalid event source for a user event: ${uri}`);
    if (!attach(event, kind, services.objects.snapshot(kind, id))) throw new UnprocessableError(`Event source does not exist: ${uri}`);
  }
  services.applications.sendTo(application, event);
}

export interface BroadcastClaimServices {
  readonly modules: ModuleRegistry;
  readonly broadcasts: ChannelBroadcasts;
}

/**
 * Claims a broadcast channel for an application; `unavailable` when res_stasis_broadcast is not
 * running. The application is not checked, as in Asterisk (see ChannelBroadcasts.claim).
 */
export function claimBroadcastChannel(services: BroadcastClaimServices, channelId: string, application: string): ClaimResult | 'unavailable' {
  if (!services.modules.isRunning(MODULE_NAMES.stasisBroadcast)) return 'unavailable';
  return services.broadcasts.claim(channelId, application);
}
