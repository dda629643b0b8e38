// The object types the server knows: the SIP (res_pjsip) types, plus whatever else the
// configuration file defines, so every object the operator configured can be read through ARI.
import type { DynamicConfig } from './store.ts';
import type { FileBackend } from './file-backend.ts';
import type { FieldSpec } from './types.ts';

const oneOf =
  (...allowed: string[]) =>
  (value: string): string | undefined =>
    allowed.includes(value.toLowerCase()) ? undefined : `must be one of ${allowed.join(', ')}`;

const nonNegativeInteger = (value: string): string | undefined =>
  /^\d+$/.test(value.trim()) ? undefined : 'must be a non-negative integer';

/** Asterisk's spellings of true and false (ast_true / ast_false). */
const yesNo = oneOf('yes', 'no', 'true', 'false', 'y', 'n', 't', 'f', '1', '0', 'on', 'off');

const field = (defaultValue: string, validate?: FieldSpec['validate']): FieldSpec => ({ default: defaultValue, validate });

export const SIP_CONFIG_CLASS = 'res_pjsip';

/**
 * The res_pjsip types with every attribute the SIP technology reads (src/channels/pjsip/config/build.ts; a
 * test keeps the two lists in step), under Asterisk's names and with Asterisk's defaults. The
 * defaults are what ARI reports for unset fields; the technology reads only the fields an object
 * sets, so a default here never changes what an endpoint does. Unknown attributes are refused.
 */
export function registerBuiltinConfigTypes(store: DynamicConfig): void {
  const backends = ['file', 'sqlite'] as const;
  store.registerType(SIP_CONFIG_CLASS, 'endpoint', {
    backends,
    fields: {
      context: field('default'),
      message_context: field(''),
      disallow: field(''),
      allow: field(''),
      aors: field(''),
      auth: field(''),
      outbound_auth: field(''),
      transport: field(''),
      direct_media: field('no', yesNo),
      callerid: field(''),
      dtmf_mode: field('rfc4733', oneOf('rfc4733', 'inband', 'info', 'auto', 'auto_info')),
      identify_by: field('username,ip'),
      language: field(''),
      from_user: field(''),
      from_domain: field(''),
      send_pai: field('no', yesNo),
      send_rpid: field('no', yesNo),
      trust_id_inbound: field('no', yesNo),
      trust_id_outbound: field('no', yesNo),
      rtp_symmetric: field('no', yesNo),
      force_rport: field('yes', yesNo),
      rewrite_contact: field('no', yesNo),
      media_address: field(''),
      rtp_timeout: field('0', nonNegativeInteger),
      rtcp_mux: field('no', yesNo),
      outbound_proxy: field(''),
      allow_unauthenticated_options: field('no', yesNo),
    },
  });
  store.registerType(SIP_CONFIG_CLASS, 'aor', {
    backends,
    fields: {
      max_contacts: field('0', nonNegativeInteger),
      remove_existing: field('no', yesNo),
      contact: field(''),
      qualify_frequency: field('0', nonNegativeInteger),
      qualify_timeout: field('3.000000'),
      default_expiration: field('3600', nonNegativeInteger),
      minimum_expiration: field('60', nonNegativeInteger),
      maximum_expiration: field('7200', nonNegativeInteger),
      outbound_proxy: field(''),
    },
  });
  store.registerType(SIP_CONFIG_CLASS, 'auth', {
    backends,
    fields: {
      auth_type: field('userpass', oneOf('userpass', 'md5')),
      username: field(''),
      password: field(''),
      md5_cred: field(''),
      realm: field(''),
      nonce_lifetime: field('32', nonNegativeInteger),
    },
  });
  store.registerType(SIP_CONFIG_CLASS, 'identify', {
    backends,
    fields: {
      endpoint: field(''),
      match: field(''),
      srv_lookups: field('yes', yesNo),
    },
  });
  store.registerType(SIP_CONFIG_CLASS, 'registration', {
    backends,
    fields: {
      server_uri: field(''),
      client_uri: field(''),
      contact_user: field(''),
      outbound_auth: field(''),
      transport: field(''),
      outbound_proxy: field(''),
      expiration: field('3600', nonNegativeInteger),
      retry_interval: field('60', nonNegativeInteger),
      forbidden_retry_interval: field('0', nonNegativeInteger),
      fatal_retry_interval: field('0', nonNegativeInteger),
      max_retries: field('10', nonNegativeInteger),
      auth_rejection_permanent: field('yes', yesNo),
      line: field('no', yesNo),
      endpoint: field(''),
      max_random_initial_delay: field('10', nonNegativeInteger),
    },
  });
}

/**
 * Registers, as read-only types, the class/type pairs the configuration file uses but no code
 * registered; their fields are those the file's objects set, with empty defaults.
 */
export function registerFileOnlyTypes(store: DynamicConfig, file: FileBackend): void {
  for (const { configClass, objectType, fieldNames } of file.objectTypes()) {
    if (store.hasType(configClass, objectType)) continue;
    store.registerType(configClass, objectType, {
      backends: ['file'],
      fields: Object.fromEntries(fieldNames.map((name) => [name, field('')])),
    });
  }
}
