// Test certificates made at test time with the openssl command (no private key is committed): a CA,
// and leaf certificates it signs for servers and clients, in a temporary directory.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Whether the openssl command is there (Debian package openssl, installed by .ci/run). */
export const HAVE_OPENSSL = spawnSync('openssl', ['version'], { encoding: 'utf8' }).error === undefined;
export const NO_OPENSSL = HAVE_OPENSSL ? false : 'the openssl command is not installed (Debian package openssl)';

export interface CertPair {
  readonly cert: string;
  readonly key: string;
}

export interface TestCa extends CertPair {
  readonly dir: string;
  /** A leaf certificate signed by this CA, for `names` (`DNS:localhost,IP:127.0.0.1`). */
  issue(name: string, names: string, options?: { passphrase?: string }): Promise<CertPair>;
  remove(): void;
}

/** A self-signed CA named `name` in a new temporary directory. */
export async function makeTestCa(name = 'Patchbay Test CA'): Promise<TestCa> {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-tls-'));
  const ca: CertPair = { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') };
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-keyout', ca.key, '-out', ca.cert]);
  let serial = 1;
  return {
    ...ca,
    dir,
    async issue(leaf, names, options = {}) {
      const base = join(dir, `${leaf}-${serial}`);
      const pair: CertPair = { cert: `${base}.crt`, key: `${base}.key` };
      const keyArgs = options.passphrase ? ['-passout', `pass:${options.passphrase}`] : ['-nodes'];
      await run('openssl', ['req', '-newkey', 'rsa:2048', ...keyArgs, '-subj', `/CN=${leaf}`, '-keyout', pair.key, '-out', `${base}.csr`]);
      const ext = `${base}.ext`;
      writeFileSync(ext, `subjectAltName=${names}\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n`);
      await run('openssl', ['x509', '-req', '-in', `${base}.csr`, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial', String(serial++), '-days', '2', '-extfile', ext, '-out', pair.cert]);
      return pair;
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
