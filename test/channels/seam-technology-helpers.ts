// What the technology-seam tests' fake technologies share: holding the core's context between
// start() and stop(), and naming each channel `TECH/resource-N` in the order they are made, so a
// test technology only says how its far ends behave and where its inbound calls go.
import type { Channel } from '../../src/core/channels/channel.ts';
import type { ChannelRequest, ChannelTechnology, TechnologyContext, TechnologyModule } from '../../src/core/channels/technology.ts';

export abstract class SeamTechnology implements ChannelTechnology {
  abstract readonly name: string;
  abstract readonly description: string;
  abstract readonly module: TechnologyModule;
  context: TechnologyContext | undefined;
  #sequence = 0;

  start(context: TechnologyContext): void {
    this.context = context;
  }

  stop(): void {
    this.context = undefined;
  }

  abstract request(request: ChannelRequest): Channel;

  /** The next channel name for `resource`: `NAME/resource-N`, N counting every channel made. */
  protected nextName(resource: string): string {
    return `${this.name}/${resource}-${++this.#sequence}`;
  }
}
