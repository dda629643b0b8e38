// The media clock of the RTP stream tests, driven by hand: each tick() is one 20 ms frame time, so a
// test decides exactly when the stream plays out, sends and reports.
export class ManualClock {
  ticks = 0;
  readonly listeners = new Set<() => void>();
  onTick(listener: () => void): void {
    this.listeners.add(listener);
  }
  offTick(listener: () => void): void {
    this.listeners.delete(listener);
  }
  tick(): void {
    this.ticks += 1;
    for (const listener of [...this.listeners]) listener();
  }
}
