// Models of the server-management resource (/asterisk).
import type { ModelDecl } from '../types.ts';

export const asteriskModels = {
  BuildInfo: {
    description: 'How and where the server binary was built.',
    properties: {
      os: { type: 'string', required: true, description: 'Operating system of the build host.' },
      kernel: { type: 'string', required: true, description: 'Kernel version of the build host.' },
      options: { type: 'string', required: true, description: 'Compile-time options enabled in the build (may be empty).' },
      machine: { type: 'string', required: true, description: 'Machine architecture of the build.' },
      date: { type: 'string', required: true, description: 'When the build was made.' },
      user: { type: 'string', required: true, description: 'Account that made the build.' },
    },
  },
  SystemInfo: {
    description: 'Identity of the running server.',
    properties: {
      version: { type: 'string', required: true, description: 'Server version string.' },
      entity_id: { type: 'string', required: true, description: 'Entity identifier of this server (same value as asterisk_id).' },
    },
  },
  SetId: {
    description: 'User and group the server process runs as.',
    properties: {
      user: { type: 'string', required: true, description: 'Effective user of the process.' },
      group: { type: 'string', required: true, description: 'Effective group of the process.' },
    },
  },
  ConfigInfo: {
    description: 'Selected settings of the running server.',
    properties: {
      name: { type: 'string', required: true, description: 'Configured system name.' },
      default_language: { type: 'string', required: true, description: 'Language used when a channel sets none.' },
      max_channels: { type: 'int', description: 'Channel limit; left out when unlimited (0).' },
      max_open_files: { type: 'int', description: 'Open-file limit; left out when unlimited (0).' },
      max_load: { type: 'double', description: 'Load-average limit; left out when unlimited (0).' },
      setid: { type: 'SetId', required: true, description: 'User and group of the process.' },
    },
  },
  StatusInfo: {
    description: 'Start and reload times of the server.',
    properties: {
      startup_time: { type: 'Date', required: true, description: 'When the server started.' },
      last_reload_time: { type: 'Date', required: true, description: 'When the configuration was last reloaded.' },
    },
  },
  AsteriskInfo: {
    description: 'System information, split into sections that can be requested individually.',
    properties: {
      build: { type: 'BuildInfo', description: 'Build section.' },
      system: { type: 'SystemInfo', description: 'System section.' },
      config: { type: 'ConfigInfo', description: 'Configuration section.' },
      status: { type: 'StatusInfo', description: 'Status section.' },
    },
  },
  AsteriskPing: {
    description: 'Answer to a ping of the server.',
    properties: {
      asterisk_id: { type: 'string', required: true, description: 'Entity identifier of the answering server.' },
      ping: { type: 'string', required: true, description: 'Always the text "pong".' },
      timestamp: { type: 'string', required: true, description: 'Server time of the answer.' },
    },
  },
  Module: {
    description: 'A loaded server module.',
    properties: {
      name: { type: 'string', required: true, description: 'Resource (file) name of the module.' },
      description: { type: 'string', required: true, description: 'What the module provides.' },
      use_count: { type: 'int', required: true, description: 'How many users currently hold the module.' },
      status: { type: 'string', required: true, description: 'Whether the module is running.' },
      support_level: { type: 'string', required: true, description: 'Support level the module is maintained at.' },
    },
  },
  LogChannel: {
    description: 'An existing log channel.',
    properties: {
      channel: { type: 'string', required: true, description: 'Name of the log channel.' },
      type: { type: 'string', required: true, description: 'Kind of log channel (file, console, syslog).' },
      status: { type: 'string', required: true, description: 'Whether the log channel is enabled.' },
      configuration: { type: 'string', required: true, description: 'Log levels the channel records.' },
    },
  },
  Variable: {
    description: 'The value of one variable.',
    properties: {
      value: { type: 'string', required: true, description: 'Current value (empty when unset, for global variables).' },
    },
  },
  ConfigTuple: {
    description: 'One attribute of a dynamic configuration object and its value.',
    properties: {
      attribute: { type: 'string', required: true, description: 'Attribute name.' },
      value: { type: 'string', required: true, description: 'Attribute value.' },
    },
  },
} as const satisfies Record<string, ModelDecl>;
