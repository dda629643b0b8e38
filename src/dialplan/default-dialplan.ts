// The dialplan Patchbay runs when none is configured: a few extensions for trying out clients.
import { Dialplan } from './dialplan.ts';

export const DEFAULT_DIALPLAN_FILE = 'default-dialplan.conf';

export const DEFAULT_DIALPLAN = `; Patchbay's built-in dialplan, in extensions.conf syntax.
[default]
; Parks the caller on an answered channel for an hour, for tests that need a live call.
exten => answer,1,Answer()
 same => n,Wait(3600)

exten => echo,1,Answer()
 same => n,Echo()

; Hands the call to the ARI application test-app, with "dialplan" as its argument.
exten => 1000,1,Answer()
 same => n,Stasis(test-app,dialplan)
 same => n,Hangup()

exten => hello,1,Answer()
 same => n,Playback(hello-world)
 same => n,Hangup()
`;

export function loadDefaultDialplan(): Dialplan {
  return Dialplan.parse(DEFAULT_DIALPLAN, DEFAULT_DIALPLAN_FILE);
}
