// Models of the events resource: the WebSocket message hierarchy, every event type and their
// helper models. Each subtype lists only its own fields; inherited ones come from `extends`.
import type { ModelDecl } from '../types.ts';

export const eventModels = {
  Message: {
    description: 'Base of every message sent over the event WebSocket.',
    discriminator: 'type',
    subTypes: ['MissingParams', 'Event'],
    properties: {
      type: { type: 'string', required: true, description: 'Kind of message; selects the subtype.' },
      asterisk_id: { type: 'string', description: 'Entity identifier of the server that sent the message.' },
    },
  },
  MissingParams: {
    description: 'Reports required parameters that were not supplied.',
    extends: 'Message',
    properties: {
      params: { type: 'List[string]', required: true, description: 'Names of the missing parameters.' },
    },
  },
  Event: {
    description: 'Base of every event delivered to an application.',
    extends: 'Message',
    subTypes: [
      'DeviceStateChanged',
      'PlaybackStarted',
      'PlaybackContinuing',
      'PlaybackFinished',
      'RecordingStarted',
      'RecordingFinished',
      'RecordingFailed',
      'ApplicationMoveFailed',
      'ApplicationRegistered',
      'ApplicationUnregistered',
      'ApplicationReplaced',
      'BridgeCreated',
      'BridgeDestroyed',
      'BridgeMerged',
      'BridgeBlindTransfer',
      'BridgeAttendedTransfer',
      'BridgeVideoSourceChanged',
      'ChannelCreated',
      'ChannelDestroyed',
      'ChannelEnteredBridge',
      'ChannelLeftBridge',
      'ChannelStateChange',
      'ChannelDtmfReceived',
      'ChannelDialplan',
      'ChannelCallerId',
      'ChannelUserevent',
      'ChannelHangupRequest',
      'ChannelVarset',
      'ChannelToneDetected',
      'ChannelTalkingStarted',
      'ChannelTalkingFinished',
      'ChannelHold',
      'ChannelUnhold',
      'ContactStatusChange',
      'EndpointStateChange',
      'Dial',
      'StasisEnd',
      'StasisStart',
      'TextMessageReceived',
      'ChannelConnectedLine',
      'PeerStatusChange',
      'ChannelTransfer',
      'RESTResponse',
      'CallBroadcast',
      'CallClaimed',
    ],
    properties: {
      application: { type: 'string', required: true, description: 'Name of the application receiving the event.' },
      timestamp: { type: 'Date', required: true, description: 'When the event happened.' },
      sequence: {
        type: 'long',
        description:
          'Patchbay: number of the event in its application\'s stream, consecutive from 1. Give the last one processed as resumeAfter when reconnecting. Absent on messages about the connection itself (RESTResponse, ApplicationReplaced, EventsLost).',
      },
    },
  },

  // ---- Helper models -------------------------------------------------------------------------

  ContactInfo: {
    description: 'Reachability details of one contact of an endpoint.',
    properties: {
      uri: { type: 'string', required: true, description: 'Address of the contact.' },
      contact_status: {
        type: 'string',
        required: true,
        allowedValues: ['Unreachable', 'Reachable', 'Unknown', 'NonQualified', 'Removed'],
        description: 'Reachability of the contact.',
      },
      aor: { type: 'string', required: true, description: 'Address of record the contact belongs to.' },
      roundtrip_usec: { type: 'string', description: 'Last measured round trip, in microseconds.' },
    },
  },
  Peer: {
    description: 'Status details of a peer.',
    properties: {
      peer_status: { type: 'string', required: true, description: 'Current status of the peer.' },
      cause: { type: 'string', description: 'Reason for the status change.' },
      address: { type: 'string', description: 'Network address of the peer.' },
      port: { type: 'string', description: 'Network port of the peer.' },
      time: { type: 'string', description: 'When the status changed.' },
    },
  },
  ReferTo: {
    description: 'Where a transfer request points.',
    properties: {
      requested_destination: { type: 'RequiredDestination', required: true, description: 'Destination named in the request.' },
      destination_channel: { type: 'Channel', description: 'Channel found for the destination, if any.' },
      connected_channel: { type: 'Channel', description: 'Channel connected to the destination channel.' },
      bridge: { type: 'Bridge', description: 'Bridge the destination channel is in.' },
    },
  },
  ReferredBy: {
    description: 'Who asked for a transfer.',
    properties: {
      source_channel: { type: 'Channel', required: true, description: 'Channel that sent the transfer request.' },
      connected_channel: { type: 'Channel', description: 'Channel connected to the requesting channel.' },
      bridge: { type: 'Bridge', description: 'Bridge the requesting channel is in.' },
    },
  },
  RequiredDestination: {
    description: 'Destination given in a transfer request.',
    properties: {
      protocol_id: { type: 'string', description: 'Protocol call id of the destination.' },
      destination: { type: 'string', description: 'Destination address.' },
      additional_protocol_params: { type: 'List[AdditionalParam]', description: 'Extra protocol parameters from the request.' },
    },
  },
  AdditionalParam: {
    description: 'A protocol parameter carried with a transfer request.',
    properties: {
      parameter_name: { type: 'string', required: true, description: 'Parameter name.' },
      parameter_value: { type: 'string', required: true, description: 'Parameter value.' },
    },
  },
  RESTHeader: {
    description: 'A header of a request or response sent over the WebSocket.',
    properties: {
      name: { type: 'string', required: true, description: 'Header name.' },
      value: { type: 'string', required: true, description: 'Header value.' },
    },
  },
  RESTQueryStringParameter: {
    description: 'A query parameter of a request sent over the WebSocket.',
    properties: {
      name: { type: 'string', required: true, description: 'Parameter name.' },
      value: { type: 'string', required: true, description: 'Parameter value.' },
    },
  },
  RESTRequest: {
    description: 'A REST request sent by the client over the event WebSocket.',
    properties: {
      type: { type: 'string', required: true, description: 'Always RESTRequest.' },
      transaction_id: { type: 'string', required: true, description: 'Client-chosen transaction id, echoed in the response.' },
      request_id: { type: 'string', required: true, description: 'Client-chosen request id, echoed in the response.' },
      method: { type: 'string', required: true, description: 'HTTP method of the request.' },
      uri: { type: 'string', required: true, description: 'Resource path relative to /ari, with no leading slash.' },
      content_type: { type: 'string', description: 'Media type of message_body; needed when a body is present.' },
      query_strings: { type: 'List[RESTQueryStringParameter]', description: 'Query parameters of the request.' },
      message_body: { type: 'string', description: 'Request body as text.' },
    },
  },

  // ---- Events --------------------------------------------------------------------------------

  DeviceStateChanged: {
    description: 'A subscribed device state changed.',
    extends: 'Event',
    properties: {
      device_state: { type: 'DeviceState', required: true, description: 'The device state after the change.' },
    },
  },
  PlaybackStarted: {
    description: 'A playback began.',
    extends: 'Event',
    properties: {
      playback: { type: 'Playback', required: true, description: 'The playback.' },
    },
  },
  PlaybackContinuing: {
    description: 'A media item of a list finished and the next one follows.',
    extends: 'Event',
    properties: {
      playback: { type: 'Playback', required: true, description: 'The playback.' },
    },
  },
  PlaybackFinished: {
    description: 'A playback ended.',
    extends: 'Event',
    properties: {
      playback: { type: 'Playback', required: true, description: 'The playback.' },
    },
  },
  RecordingStarted: {
    description: 'A recording began.',
    extends: 'Event',
    properties: {
      recording: { type: 'LiveRecording', required: true, description: 'The recording.' },
    },
  },
  RecordingFinished: {
    description: 'A recording ended, either saved or discarded.',
    extends: 'Event',
    properties: {
      recording: { type: 'LiveRecording', required: true, description: 'The recording, with its durations.' },
    },
  },
  RecordingFailed: {
    description: 'A recording could not be made.',
    extends: 'Event',
    properties: {
      recording: { type: 'LiveRecording', required: true, description: 'The recording.' },
    },
  },
  ApplicationMoveFailed: {
    description: 'Moving a channel to another application did not succeed.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The channel that was to be moved.' },
      destination: { type: 'string', required: true, description: 'Application the channel was to be moved to.' },
      args: { type: 'List[string]', required: true, description: 'Arguments meant for the destination application.' },
    },
  },
  ApplicationRegistered: {
    description: 'The application was registered (outbound WebSocket connections only).',
    extends: 'Event',
    properties: {},
  },
  ApplicationUnregistered: {
    description: 'The application was unregistered (outbound WebSocket connections only).',
    extends: 'Event',
    properties: {},
  },
  ApplicationReplaced: {
    description: 'Another connection took over the application.',
    extends: 'Event',
    properties: {},
  },
  BridgeCreated: {
    description: 'A bridge was created.',
    extends: 'Event',
    properties: {
      bridge: { type: 'Bridge', required: true, description: 'The new bridge.' },
    },
  },
  BridgeDestroyed: {
    description: 'A bridge was destroyed.',
    extends: 'Event',
    properties: {
      bridge: { type: 'Bridge', required: true, description: 'The bridge as it was last.' },
    },
  },
  BridgeMerged: {
    description: 'One bridge was merged into another.',
    extends: 'Event',
    properties: {
      bridge: { type: 'Bridge', required: true, description: 'The bridge that remains.' },
      bridge_from: { type: 'Bridge', required: true, description: 'The bridge that was absorbed.' },
    },
  },
  BridgeBlindTransfer: {
    description: 'A blind transfer took place.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'Channel that performed the transfer.' },
      replace_channel: { type: 'Channel', description: 'Channel that takes the place of the transferer, if any.' },
      transferee: { type: 'Channel', description: 'Channel being transferred.' },
      exten: { type: 'string', required: true, description: 'Extension transferred to.' },
      context: { type: 'string', required: true, description: 'Context transferred to.' },
      result: { type: 'string', required: true, description: 'Outcome of the transfer.' },
      is_external: { type: 'boolean', required: true, description: 'Whether the transfer was requested by a protocol rather than internally.' },
      bridge: { type: 'Bridge', description: 'Bridge the transferer was in.' },
    },
  },
  BridgeAttendedTransfer: {
    description: 'An attended transfer took place.',
    extends: 'Event',
    properties: {
      transferer_first_leg: { type: 'Channel', required: true, description: 'First leg of the transferer.' },
      transferer_second_leg: { type: 'Channel', required: true, description: 'Second leg of the transferer.' },
      replace_channel: { type: 'Channel', description: 'Channel that takes the place of the transferer, if any.' },
      transferee: { type: 'Channel', description: 'Channel being transferred.' },
      transfer_target: { type: 'Channel', description: 'Channel the transferee is connected to.' },
      result: { type: 'string', required: true, description: 'Outcome of the transfer.' },
      is_external: { type: 'boolean', required: true, description: 'Whether the transfer was requested by a protocol rather than internally.' },
      transferer_first_leg_bridge: { type: 'Bridge', description: 'Bridge of the first transferer leg.' },
      transferer_second_leg_bridge: { type: 'Bridge', description: 'Bridge of the second transferer leg.' },
      destination_type: { type: 'string', required: true, description: 'How the transfer was completed (bridge, application, link, threeway or fail).' },
      destination_bridge: { type: 'string', description: 'Id of the bridge the parties were joined in.' },
      destination_application: { type: 'string', description: 'Application the parties were handed to.' },
      destination_link_first_leg: { type: 'Channel', description: 'First channel of a link destination.' },
      destination_link_second_leg: { type: 'Channel', description: 'Second channel of a link destination.' },
      destination_threeway_channel: { type: 'Channel', description: 'Channel of a three-way destination.' },
      destination_threeway_bridge: { type: 'Bridge', description: 'Bridge of a three-way destination.' },
    },
  },
  BridgeVideoSourceChanged: {
    description: 'The video source of a bridge changed.',
    extends: 'Event',
    properties: {
      bridge: { type: 'Bridge', required: true, description: 'The bridge.' },
      old_video_source_id: { type: 'string', description: 'Previous video source, when one was set.' },
    },
  },
  ChannelCreated: {
    description: 'A channel was created.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The new channel.' },
    },
  },
  ChannelDestroyed: {
    description: 'A channel was destroyed.',
    extends: 'Event',
    properties: {
      cause: { type: 'int', required: true, description: 'Q.850 hangup cause.' },
      cause_txt: { type: 'string', required: true, description: 'Text form of the hangup cause.' },
      tech_cause: { type: 'int', description: 'Technology-specific cause, when non-zero.' },
      channel: { type: 'Channel', required: true, description: 'The channel as it was last.' },
    },
  },
  ChannelEnteredBridge: {
    description: 'A channel joined a bridge.',
    extends: 'Event',
    properties: {
      bridge: { type: 'Bridge', required: true, description: 'The bridge.' },
      channel: { type: 'Channel', description: 'The channel that joined.' },
    },
  },
  ChannelLeftBridge: {
    description: 'A channel left a bridge.',
    extends: 'Event',
    properties: {
      bridge: { type: 'Bridge', required: true, description: 'The bridge.' },
      channel: { type: 'Channel', required: true, description: 'The channel that left.' },
    },
  },
  ChannelStateChange: {
    description: 'The line state of a channel changed.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The channel in its new state.' },
    },
  },
  ChannelDtmfReceived: {
    description: 'A DTMF digit was received on a channel.',
    extends: 'Event',
    properties: {
      digit: { type: 'string', required: true, description: 'The digit (0-9, A-E, # or *).' },
      duration_ms: { type: 'int', required: true, description: 'Length of the digit in milliseconds.' },
      channel: { type: 'Channel', required: true, description: 'The receiving channel.' },
    },
  },
  ChannelDialplan: {
    description: 'The dialplan position of a channel changed.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The channel.' },
      dialplan_app: { type: 'string', required: true, description: 'Dialplan application now running.' },
      dialplan_app_data: { type: 'string', required: true, description: 'Arguments of that application.' },
    },
  },
  ChannelCallerId: {
    description: 'The caller identity of a channel changed.',
    extends: 'Event',
    properties: {
      caller_presentation: { type: 'int', required: true, description: 'Numeric presentation setting of the caller id.' },
      caller_presentation_txt: { type: 'string', required: true, description: 'Text form of the presentation setting.' },
      channel: { type: 'Channel', required: true, description: 'The channel.' },
    },
  },
  ChannelUserevent: {
    description: 'A user-defined event was raised.',
    extends: 'Event',
    properties: {
      eventname: { type: 'string', required: true, description: 'Name of the user event.' },
      channel: { type: 'Channel', description: 'Channel the event refers to.' },
      bridge: { type: 'Bridge', description: 'Bridge the event refers to.' },
      endpoint: { type: 'Endpoint', description: 'Endpoint the event refers to.' },
      userevent: { type: 'object', required: true, description: 'Custom key/value data of the event.' },
    },
  },
  ChannelHangupRequest: {
    description: 'A hangup was requested on a channel.',
    extends: 'Event',
    properties: {
      cause: { type: 'int', description: 'Requested hangup cause.' },
      tech_cause: { type: 'int', description: 'Technology-specific cause.' },
      soft: { type: 'boolean', description: 'Whether this was a soft hangup request.' },
      channel: { type: 'Channel', required: true, description: 'The channel.' },
    },
  },
  ChannelVarset: {
    description: 'A variable was set, on a channel or globally.',
    extends: 'Event',
    properties: {
      variable: { type: 'string', required: true, description: 'Name of the variable.' },
      value: { type: 'string', required: true, description: 'New value.' },
      channel: { type: 'Channel', description: 'The channel, absent for a global variable.' },
    },
  },
  ChannelToneDetected: {
    description: 'A tone was detected on a channel.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The channel.' },
    },
  },
  ChannelTalkingStarted: {
    description: 'Talking began on a channel with talk detection enabled.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The channel.' },
    },
  },
  ChannelTalkingFinished: {
    description: 'Talking stopped on a channel with talk detection enabled.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The channel.' },
      duration: { type: 'int', required: true, description: 'How long the talking lasted, in milliseconds.' },
    },
  },
  ChannelHold: {
    description: 'A channel was put on hold.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The channel.' },
      musicclass: { type: 'string', description: 'Music-on-hold class suggested by the holding party.' },
    },
  },
  ChannelUnhold: {
    description: 'A channel was taken off hold.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The channel.' },
    },
  },
  ContactStatusChange: {
    description: 'The reachability of a contact of an endpoint changed.',
    extends: 'Event',
    properties: {
      endpoint: { type: 'Endpoint', required: true, description: 'The endpoint.' },
      contact_info: { type: 'ContactInfo', required: true, description: 'The contact and its new status.' },
    },
  },
  EndpointStateChange: {
    description: 'The state of an endpoint changed.',
    extends: 'Event',
    properties: {
      endpoint: { type: 'Endpoint', required: true, description: 'The endpoint in its new state.' },
    },
  },
  Dial: {
    description: 'Progress of a dial attempt.',
    extends: 'Event',
    properties: {
      caller: { type: 'Channel', description: 'Channel that is dialing, when there is one.' },
      peer: { type: 'Channel', required: true, description: 'Channel being dialed.' },
      forward: { type: 'string', description: 'Where the call was forwarded to.' },
      forwarded: { type: 'Channel', description: 'Channel created for the forward.' },
      dialstring: { type: 'string', description: 'What was dialed.' },
      dialstatus: { type: 'string', required: true, description: 'Current dial status; empty while the attempt begins.' },
    },
  },
  StasisEnd: {
    description: 'A channel left the application.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The channel.' },
    },
  },
  StasisStart: {
    description: 'A channel entered the application.',
    extends: 'Event',
    properties: {
      args: { type: 'List[string]', required: true, description: 'Arguments given to the application.' },
      channel: { type: 'Channel', required: true, description: 'The channel.' },
      replace_channel: { type: 'Channel', description: 'Channel this one replaces after a transfer, if any.' },
    },
  },
  TextMessageReceived: {
    description: 'An endpoint received a text message.',
    extends: 'Event',
    properties: {
      message: { type: 'TextMessage', required: true, description: 'The message.' },
      endpoint: { type: 'Endpoint', description: 'The receiving endpoint.' },
    },
  },
  ChannelConnectedLine: {
    description: 'The connected-line identity of a channel changed.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The channel.' },
    },
  },
  PeerStatusChange: {
    description: 'The status of a peer changed.',
    extends: 'Event',
    properties: {
      endpoint: { type: 'Endpoint', required: true, description: 'The endpoint of the peer.' },
      peer: { type: 'Peer', required: true, description: 'The peer and its new status.' },
    },
  },
  ChannelTransfer: {
    description: 'A protocol-level transfer request was received on a channel.',
    extends: 'Event',
    properties: {
      state: { type: 'string', description: 'Progress of the transfer.' },
      refer_to: { type: 'ReferTo', required: true, description: 'Target of the transfer.' },
      referred_by: { type: 'ReferredBy', required: true, description: 'Originator of the transfer.' },
    },
  },
  RESTResponse: {
    description: 'Answer to a REST request sent over the event WebSocket.',
    extends: 'Event',
    properties: {
      transaction_id: { type: 'string', required: true, description: 'Transaction id copied from the request.' },
      request_id: { type: 'string', required: true, description: 'Request id copied from the request.' },
      status_code: { type: 'int', required: true, description: 'HTTP status of the answer.' },
      reason_phrase: { type: 'string', required: true, description: 'HTTP reason text of the answer.' },
      uri: { type: 'string', required: true, description: 'Resource path copied from the request.' },
      content_type: { type: 'string', description: 'Media type of message_body, when there is a body.' },
      message_body: { type: 'string', description: 'Response body as text.' },
    },
  },
  // Not in Event.subTypes, which lists ARI's own event types (clients generated from them and
  // tests count them); it is a Message about the connection, declared here so that Swagger shows
  // it and developer mode checks it.
  EventsLost: {
    description:
      'Patchbay: events of the application that a resuming connection asked for (resumeAfter, or its unacknowledged events) are no longer held; the events that follow carry on after the gap.',
    extends: 'Event',
    properties: {
      from_sequence: { type: 'long', required: true, description: 'First sequence number lost.' },
      to_sequence: { type: 'long', description: 'Last sequence number lost; absent when unknown (reason unknown_sequence).' },
      reason: {
        type: 'string',
        required: true,
        description:
          'expired: the buffer dropped them (count, bytes or age limit); unknown_sequence: the server never numbered that far (its numbering restarted, e.g. after a restart without persistence), so the events that follow are numbered anew.',
      },
    },
  },
  CallBroadcast: {
    description: 'A call is offered to several applications, the first to claim it wins.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The offered channel.' },
      caller: { type: 'string', description: 'Calling party.' },
      called: { type: 'string', description: 'Called party.' },
    },
  },
  CallClaimed: {
    description: 'A broadcast call was claimed by an application.',
    extends: 'Event',
    properties: {
      channel: { type: 'Channel', required: true, description: 'The claimed channel.' },
      winner_app: { type: 'string', required: true, description: 'Application that claimed the call.' },
    },
  },
} as const satisfies Record<string, ModelDecl>;
