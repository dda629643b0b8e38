// The relay's tags and the home's ordered hand-over (src/cluster/event-order.ts), without NATS:
// citations only between applications announced together, events held behind what they name and
// released as it comes, each application's own order kept, waits and holdings bounded.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrderedDelivery, ORDER_HEADER, parseOrderTag, RelayOrder, type Relayed } from '../../src/cluster/event-order.ts';

const tagOf = (relay: RelayOrder, app: string) => parseOrderTag(relay.tag(app)?.get(ORDER_HEADER));

describe('RelayOrder', () => {
  it('tags only grouped applications, citing the other application\'s last event once both are announced', () => {
    const relay = new RelayOrder();
    assert.equal(relay.tag('x'), undefined);
    relay.announced('x', { home: 'B', group: ['x', 'y'] });
    // y not announced yet: tagged, nothing cited.
    const first = tagOf(relay, 'x')!;
    assert.equal(first.after.size, 0);
    relay.announced('y', { home: 'B', group: ['x', 'y'] });
    const y1 = tagOf(relay, 'y')!;
    assert.ok(y1.counter > first.counter);
    // x's event came after x's announcement (so after x's consumer at the home): cited.
    assert.deepEqual([...y1.after], [['x', first.counter]]);
    const x2 = tagOf(relay, 'x')!;
    assert.deepEqual([...x2.after], [['y', y1.counter]]);
    assert.equal(x2.home, 'B');
    const y2 = tagOf(relay, 'y')!;
    assert.deepEqual([...y2.after], [['x', x2.counter]]);
  });

  it('cites an application named __proto__ like any other', () => {
    const relay = new RelayOrder();
    relay.announced('__proto__', { home: 'B', group: ['__proto__', 'y'] });
    relay.announced('y', { home: 'B', group: ['__proto__', 'y'] });
    const first = tagOf(relay, '__proto__')!;
    assert.deepEqual([...tagOf(relay, 'y')!.after], [['__proto__', first.counter]]);
  });

  it('does not cite an application announced with another home or group', () => {
    const relay = new RelayOrder();
    relay.announced('x', { home: 'B', group: ['x', 'y'] });
    relay.announced('y', { home: 'B', group: ['x', 'y'] });
    tagOf(relay, 'y');
    // y announced again (a new consumer at its home may come with it): its earlier events are not cited.
    relay.announced('y', { home: 'B', group: ['x', 'y'] });
    assert.equal(tagOf(relay, 'x')!.after.size, 0);
    relay.announced('y', { home: 'C', group: ['x', 'y'] });
    tagOf(relay, 'y');
    assert.equal(tagOf(relay, 'x')!.after.size, 0);
    relay.withdrawn((name) => name === 'x');
    assert.equal(relay.tag('x'), undefined);
  });
});

describe('parseOrderTag', () => {
  it('refuses what is not a tag', () => {
    for (const bad of [undefined, '', 'x', '[]', 'null', '{"s":"","n":1,"h":"B"}', '{"s":"a","n":0,"h":"B"}', '{"s":"a","n":1.5,"h":"B"}', '{"s":"a","n":3,"h":"B","a":{"y":3}}', '{"s":"a","n":3,"h":"B","a":[1]}', '{"s":"a","n":3,"h":"B","a":{"y":"1"}}', 'x'.repeat(5000)]) {
      assert.equal(parseOrderTag(bad), undefined, String(bad).slice(0, 40));
    }
    assert.deepEqual(parseOrderTag('{"s":"a","n":3,"h":"B","a":{"y":2}}'), { source: 'a', counter: 3, home: 'B', after: new Map([['y', 2]]) });
  });
});

describe('OrderedDelivery', () => {
  const event = (seq: number, counter?: number, after: Record<string, number> = {}, home = 'B'): Relayed => ({
    data: new Uint8Array(),
    seq,
    tag: counter === undefined ? undefined : { source: 'A', counter, home, after: new Map(Object.entries(after)) },
  });
  const make = (maxHeld = 100, maxHoldMs = 60_000) => {
    const out: string[] = [];
    const delivery = new OrderedDelivery({ node: 'B', groupOf: () => ['x', 'y'], deliver: (app, e) => out.push(`${app}${e.seq}`), maxHoldMs, maxHeld });
    return { out, delivery };
  };

  it('holds an event behind the one it names, and keeps each application\'s own order', () => {
    const { out, delivery } = make();
    delivery.offer('y', event(1, 2, { x: 1 }));
    delivery.offer('y', event(2, 4, {}));
    assert.deepEqual(out, []);
    assert.equal(delivery.holding, 2);
    delivery.offer('x', event(1, 1));
    assert.deepEqual(out, ['x1', 'y1', 'y2']);
    assert.equal(delivery.holding, 0);
    delivery.stop();
  });

  it('ignores citations made for another home or of an application outside the group, and untagged events', () => {
    const { out, delivery } = make();
    delivery.offer('x', event(1, 5, { y: 4 }, 'C'));
    delivery.offer('x', event(2, 6, { z: 3 }));
    delivery.offer('x', event(3));
    assert.deepEqual(out, ['x1', 'x2', 'x3']);
    delivery.stop();
  });

  it('lets the oldest go past the bound, and everything when flushed', () => {
    const { out, delivery } = make(2);
    delivery.offer('x', event(1, 10, { y: 9 }));
    delivery.offer('x', event(2, 11, { y: 9 }));
    delivery.offer('x', event(3, 12, { y: 9 }));
    assert.deepEqual(out, ['x1']);
    assert.equal(delivery.expired, 1);
    delivery.flush('x');
    assert.deepEqual(out, ['x1', 'x2', 'x3']);
    delivery.stop();
  });

  it('lets an event go when its wait runs out', async () => {
    const { out, delivery } = make(100, 50);
    delivery.offer('x', event(1, 10, { y: 9 }));
    assert.deepEqual(out, []);
    const deadline = Date.now() + 5000;
    while (out.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(out, ['x1']);
    assert.equal(delivery.expired, 1);
    delivery.stop();
  });
});
