// Presentation values (src/core/channels/presentation.ts) as main/callerid.c names them and
// ast_party_id_presentation combines a party's name and number.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  bothPresentation, combinedPresentation, describePresentation, isRestricted, parsePresentation, presentationName, withNamePresentation, withNumberPresentation,
} from '../../src/core/channels/presentation.ts';

test('names parse in any case, numbers as atoi does; anything else is refused', () => {
  assert.equal(parsePresentation('allowed_not_screened'), 0x00);
  assert.equal(parsePresentation(' Prohib '), 0x23);
  assert.equal(parsePresentation('unavailable'), 0x43);
  assert.equal(parsePresentation('33abc'), 33);
  assert.equal(parsePresentation('private'), undefined);
  assert.equal(parsePresentation(''), undefined);
});

test('names and descriptions of known values; unknown for the rest', () => {
  assert.equal(presentationName(0x21), 'prohib_passed_screen');
  assert.equal(presentationName(0x40), 'unavailable');
  assert.equal(presentationName(0x10), 'unknown');
  assert.equal(describePresentation(0x00), 'Presentation Allowed, Not Screened');
  assert.equal(describePresentation(0x23), 'Presentation Prohibited, Network Number');
  assert.equal(describePresentation(0x43), 'Number Unavailable');
});

test('the combined value: restricted before allowed before unavailable, with the number screening', () => {
  assert.equal(combinedPresentation(0), 0);
  assert.equal(combinedPresentation(bothPresentation(0x21)), 0x21);
  assert.equal(combinedPresentation(withNamePresentation(bothPresentation(0x01), 0x20)), 0x21);
  assert.equal(combinedPresentation(withNumberPresentation(0, 0x43)), 0x03);
  assert.equal(combinedPresentation(bothPresentation(0x43)), 0x43);
  assert.equal(combinedPresentation(bothPresentation(0x63)), 0x43);
  assert.equal(isRestricted(0), false);
  assert.equal(isRestricted(bothPresentation(0x43)), true);
  assert.equal(isRestricted(withNamePresentation(0, 0x20)), true);
});
