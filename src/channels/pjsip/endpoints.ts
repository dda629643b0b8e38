// The PJSIP endpoint set: every `res_pjsip`/`endpoint` object of the dynamic configuration (the
// configuration file's `config_objects`, pjsip.conf or objects created through ARI) is the
// endpoint `PJSIP/<id>`. Without a registration an endpoint is offline; the technology reports
// registrations through setState(). The technology registers this provider through its context
// when it starts (dialplan.ts); dialling PJSIP is the technology's business.
import { PJSIP_CONFIG_CLASS } from './config/store-types.ts';
import type { ConfigObjectChange, TechnologyConfigObjects } from '../../core/channels/technology.ts';
import type { EndpointChangeListener, EndpointInfo, EndpointProvider, EndpointState } from '../../core/endpoints.ts';

export const PJSIP_TECHNOLOGY = 'PJSIP';
const ENDPOINT_TYPE = 'endpoint';

export class PjsipEndpoints implements EndpointProvider {
  readonly technology = PJSIP_TECHNOLOGY;
  /** States other than the default (offline), by endpoint id. */
  private readonly states = new Map<string, EndpointState>();
  private readonly listeners = new Set<EndpointChangeListener>();
  private readonly config: TechnologyConfigObjects;
  /** device_state_busy_at of an endpoint as built (0: never), read from the running technology. */
  private readonly busyAtOf: (resource: string) => number;

  /** Follows the configuration's endpoint objects until the technology stops (the context unsubscribes). */
  constructor(config: TechnologyConfigObjects, busyAt: (resource: string) => number = () => 0) {
    this.config = config;
    this.busyAtOf = busyAt;
    config.onChange((change) => this.configChanged(change));
  }

  list(): EndpointInfo[] {
    return this.config.list(PJSIP_CONFIG_CLASS, ENDPOINT_TYPE).map((object) => this.infoOf(object.id));
  }

  get(resource: string): EndpointInfo | undefined {
    return this.exists(resource) ? this.infoOf(resource) : undefined;
  }

  watch(listener: EndpointChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sets an endpoint's state (a registration came or went). Ignored for an unknown endpoint. */
  setState(resource: string, state: EndpointState): void {
    if (!this.exists(resource)) return;
    const previous = this.stateOf(resource);
    if (previous === state) return;
    if (state === 'offline') this.states.delete(resource);
    else this.states.set(resource, state);
    this.notify({ kind: 'state', resource, previous });
  }

  busyAt(resource: string): number {
    return this.busyAtOf(resource);
  }

  private exists(resource: string): boolean {
    return resource !== '' && this.config.exists(PJSIP_CONFIG_CLASS, ENDPOINT_TYPE, resource);
  }

  private stateOf(resource: string): EndpointState {
    return this.states.get(resource) ?? 'offline';
  }

  private infoOf(resource: string): EndpointInfo {
    return { resource, state: this.stateOf(resource) };
  }

  private configChanged(change: ConfigObjectChange): void {
    if (change.configClass !== PJSIP_CONFIG_CLASS || change.objectType !== ENDPOINT_TYPE) return;
    if (change.action === 'created') {
      this.notify({ kind: 'added', resource: change.id });
    } else if (change.action === 'deleted' && !this.exists(change.id)) {
      const previous = this.stateOf(change.id);
      this.states.delete(change.id);
      this.notify({ kind: 'removed', resource: change.id, previous });
    }
  }

  private notify(change: Parameters<EndpointChangeListener>[0]): void {
    for (const listener of this.listeners) listener(change);
  }
}
