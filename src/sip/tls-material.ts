/**
 * The certificates, keys and policy of a TLS SIP transport (Asterisk's `protocol=tls` transport
 * options), read from their files into node:tls options: a secure context for the listening side
 * and connection options for requests this side opens. Loading checks everything up front (the
 * key matches the certificate, the passphrase opens the key, the CA files parse), so that a bad
 * file is an error at start or reload, never a handshake that fails later for every caller.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';

/** Asterisk's `method`: a protocol version, or the best available (`sslv23`, `default`, `unspecified`). */
export type TlsMethod = 'default' | 'unspecified' | 'sslv23' | 'tlsv1' | 'tlsv1_1' | 'tlsv1_2' | 'tlsv1_3';

export interface TlsSettings {
  /** PEM certificate (chain) presented to peers, as server and as client. */
  readonly certFile?: string;
  /** PEM private key of certFile. */
  readonly privKeyFile?: string;
  /** Passphrase of an encrypted privKeyFile. */
  readonly password?: string;
  /** PEM file of the CAs peers' certificates are checked against. */
  readonly caListFile?: string;
  /** A directory of PEM CA certificates (every regular file in it is read). */
  readonly caListPath?: string;
  readonly method: TlsMethod;
  /** OpenSSL cipher names, comma or colon separated; empty for OpenSSL's defaults. */
  readonly cipher?: string;
  /** Check the certificate of servers this side connects to (chain and host name). */
  readonly verifyServer: boolean;
  /** Check a certificate a client presents (a client without one is still let in). */
  readonly verifyClient: boolean;
  /** Refuse clients without a valid certificate. */
  readonly requireClientCert: boolean;
  /** With verifyServer, accept a wildcard certificate (`*.example.com`) for the host name. */
  readonly allowWildcardCerts: boolean;
}

/** Files read: a certificate, key or CA list larger than this is refused (they are a few KiB). */
const MAX_FILE_BYTES = 1 << 20;
/** CA certificates read from ca_list_path at most. */
const MAX_CA_FILES = 1000;

const VERSIONS: Partial<Record<TlsMethod, tls.SecureVersion>> = { tlsv1: 'TLSv1', tlsv1_1: 'TLSv1.1', tlsv1_2: 'TLSv1.2', tlsv1_3: 'TLSv1.3' };

export class TlsMaterial {
  /** The context new incoming connections are accepted with. */
  readonly serverContext: tls.SecureContext;
  readonly #contextOptions: tls.SecureContextOptions;

  private constructor(
    readonly settings: TlsSettings,
    contextOptions: tls.SecureContextOptions,
  ) {
    this.#contextOptions = contextOptions;
    this.serverContext = tls.createSecureContext(contextOptions);
  }

  /** Reads the files of `settings`; throws an Error naming the file or setting at fault. */
  static load(settings: TlsSettings): TlsMaterial {
    const version = VERSIONS[settings.method];
    const options: tls.SecureContextOptions = {
      ...(version ? { minVersion: version, maxVersion: version } : {}),
      ...(settings.cipher ? { ciphers: settings.cipher.split(/[\s,:]+/).filter(Boolean).join(':') } : {}),
    };
    if ((settings.certFile === undefined) !== (settings.privKeyFile === undefined)) {
      throw new Error('cert_file and priv_key_file go together');
    }
    if (settings.certFile !== undefined && settings.privKeyFile !== undefined) {
      options.cert = readBounded(settings.certFile, 'cert_file');
      options.key = readBounded(settings.privKeyFile, 'priv_key_file');
      if (settings.password) options.passphrase = settings.password;
    }
    const cas = [
      ...(settings.caListFile !== undefined ? [readBounded(settings.caListFile, 'ca_list_file')] : []),
      ...(settings.caListPath !== undefined ? readCaDirectory(settings.caListPath) : []),
    ];
    if (cas.length > 0) options.ca = cas;
    try {
      return new TlsMaterial(settings, options);
    } catch (error) {
      // OpenSSL's words ("key values mismatch", "bad decrypt", "no start line") with what they are about.
      throw new Error(`TLS material refused (cert_file ${settings.certFile ?? 'none'}, priv_key_file ${settings.privKeyFile ?? 'none'}): ${(error as Error).message}`);
    }
  }

  /** Whether this side can accept connections (it has a certificate to present). */
  get canServe(): boolean {
    return this.#contextOptions.cert !== undefined;
  }

  /** Options of an accepted socket's TLS side (a server socket with this material's context). */
  serverSocketOptions(): tls.TLSSocketOptions {
    return {
      isServer: true,
      secureContext: this.serverContext,
      // Asked for whenever it may be checked; judged after the handshake (checkClient) so that
      // verify_client without require_client_cert lets certificate-less clients in.
      requestCert: this.settings.verifyClient || this.settings.requireClientCert,
      rejectUnauthorized: false,
    };
  }

  /** Why an accepted client may not stay (undefined: it may). */
  checkClient(socket: tls.TLSSocket): string | undefined {
    const { verifyClient, requireClientCert } = this.settings;
    if (!verifyClient && !requireClientCert) return undefined;
    const presented = Object.keys(socket.getPeerCertificate()).length > 0;
    if (!presented) return requireClientCert ? 'no client certificate (require_client_cert)' : undefined;
    const verdict = chainVerdict(socket);
    return verdict === null ? undefined : `client certificate refused: ${verdict?.message ?? 'not verifiable'}`;
  }

  /** Options of a connection this side opens to `host` (a name is sent as SNI and checked against the certificate). */
  clientOptions(host: string, port: number): tls.ConnectionOptions {
    const { verifyServer, allowWildcardCerts } = this.settings;
    return {
      ...this.#contextOptions,
      host,
      port,
      ...(isIP(host) === 0 ? { servername: host } : {}),
      rejectUnauthorized: verifyServer,
      ...(verifyServer && !allowWildcardCerts ? { checkServerIdentity: refuseWildcards } : {}),
    };
  }
}

/**
 * OpenSSL's verdict on the peer's certificate chain (null: valid against the CAs). node sets
 * `authorized` only on sockets a tls.Server wrapped; ours are wrapped by the transport (so that it
 * owns them from accept to close), so the verdict is read where node reads it, from the socket's
 * TLS handle (`ssl`, kept by node for compatibility). Without one, undefined: not verifiable,
 * which refuses the client.
 */
function chainVerdict(socket: tls.TLSSocket): Error | null | undefined {
  const handle = (socket as tls.TLSSocket & { ssl?: { verifyError(): Error | null } | null }).ssl;
  return handle ? handle.verifyError() : undefined;
}

/** node's host name check, less the wildcard matches (allow_wildcard_certs=no, Asterisk's default). */
function refuseWildcards(host: string, cert: tls.PeerCertificate): Error | undefined {
  const failure = tls.checkServerIdentity(host, cert);
  if (failure) return failure;
  if (isIP(host) !== 0) return undefined;
  const names = (cert.subjectaltname ?? '')
    .split(/,\s*/)
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
  const subjectNames = names.length > 0 ? names : [String(cert.subject?.CN ?? '').toLowerCase()];
  if (subjectNames.includes(host.toLowerCase().replace(/\.$/, ''))) return undefined;
  return new Error(`certificate of ${host} matches it only through a wildcard (allow_wildcard_certs=no)`);
}

function readBounded(file: string, option: string): Buffer {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (error) {
    throw new Error(`${option} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (size > MAX_FILE_BYTES) throw new Error(`${option} ${file}: larger than ${MAX_FILE_BYTES} bytes`);
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`${option} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** Every regular PEM file of the directory (OpenSSL's hashed links included: duplicates are harmless). */
function readCaDirectory(directory: string): Buffer[] {
  let names: string[];
  try {
    names = readdirSync(directory).sort();
  } catch (error) {
    throw new Error(`ca_list_path ${directory}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const found: Buffer[] = [];
  for (const name of names) {
    const path = join(directory, name);
    let regular = false;
    try {
      regular = statSync(path).isFile();
    } catch {
      continue; // a dangling link
    }
    if (!regular) continue;
    const data = readBounded(path, 'ca_list_path');
    if (!data.includes('-----BEGIN CERTIFICATE-----')) continue;
    found.push(data);
    if (found.length >= MAX_CA_FILES) break;
  }
  return found;
}
