// EventScope.only (src/core/applications.ts): an event raised again for just the applications that
// missed it (a cluster member's ChannelLeftBridge, src/cluster/leg-events.ts) goes to exactly the
// named applications, whatever the scope's other fields and every application's subscriptions say;
// each named application's own event filter and connection still apply.
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { Applications, type ApplicationSink, type CoreEvent, type EventScope } from '../../src/core/applications.ts';
import { formatAriDate } from '../../src/util/ari-date.ts';

let applications: Applications;
/** What each application's sink received: `app:type`. */
let delivered: string[];
const sink: ApplicationSink = { deliver: (app, event) => void delivered.push(`${app}:${event.type}`) };
const event = (): CoreEvent => ({ type: 'ApplicationReplaced', timestamp: formatAriDate() });
const publish = (scope: EventScope): string[] => {
  delivered = [];
  applications.publish(event(), scope);
  return delivered.sort();
};

beforeEach(() => {
  applications = new Applications(() => true);
  delivered = [];
  // wide: every event; channelwise: subscribed to channel c1; quiet and other: no subscription.
  applications.register('wide', sink, true);
  applications.register('channelwise', sink, false);
  applications.subscribe('channelwise', ['channel:c1']);
  applications.register('quiet', sink, false);
  applications.register('other', sink, false);
});

describe('EventScope.only', () => {
  test('without it, the scope and the subscriptions decide (the baseline the cases below depart from)', () => {
    assert.deepEqual(publish({ channelIds: ['c1'], applications: ['quiet'] }), ['channelwise:ApplicationReplaced', 'quiet:ApplicationReplaced', 'wide:ApplicationReplaced']);
  });

  test('only the named applications receive the event: not a subscribe-all one, not one subscribed to its channel', () => {
    assert.deepEqual(publish({ channelIds: ['c1'], only: ['quiet'] }), ['quiet:ApplicationReplaced']);
  });

  test('a named application receives it without any subscription, and the `applications` field adds no one', () => {
    assert.deepEqual(publish({ only: ['other', 'quiet'], applications: ['channelwise'] }), ['other:ApplicationReplaced', 'quiet:ApplicationReplaced']);
  });

  test('an empty list sends the event to no one', () => {
    assert.deepEqual(publish({ channelIds: ['c1'], only: [] }), []);
  });

  test('a name no application has is passed over', () => {
    assert.deepEqual(publish({ only: ['nobody', 'wide'] }), ['wide:ApplicationReplaced']);
  });

  test('a named application\'s event filter still applies', () => {
    applications.setFilter('quiet', { disallowed: [{ type: 'ApplicationReplaced' }] });
    assert.deepEqual(publish({ only: ['quiet', 'other'] }), ['other:ApplicationReplaced']);
  });

  test('a named application whose connection went away (no event log) receives nothing', () => {
    applications.deactivate('quiet', sink);
    assert.deepEqual(publish({ only: ['quiet', 'other'] }), ['other:ApplicationReplaced']);
  });
});
