// A UDP sender of REGISTERs for the SIP authentication and registration suites: one local address,
// each REGISTER resolving with the final response, and the digest answer (MD5, qop=auth) to a
// 401's challenge. Only what those suites send; anything else the server sends it ignores.
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { digestHa1, digestResponse } from '../../src/sip/auth/digest.ts';
import { SipResponse } from '../../src/sip/message.ts';
import { parseMessage } from '../../src/sip/parser.ts';

export interface RegisterRequest {
  readonly user: string;
  readonly callId: string;
  readonly expires: number;
  readonly authorization?: string;
}

export class UdpRegistrant {
  readonly socket = dgram.createSocket('udp4');
  port = 0;
  #cseq = 0;
  #waiter: ((response: SipResponse) => void) | undefined;

  /** `address`: the local address it sends from (the server sees a distinct source per address). */
  constructor(
    readonly serverPort: number,
    readonly address = '127.0.0.1',
  ) {}

  async start(): Promise<this> {
    this.socket.on('message', (data) => {
      const parsed = parseMessage(data);
      if (parsed.ok && parsed.message instanceof SipResponse && parsed.message.status >= 200) this.#waiter?.(parsed.message);
    });
    await new Promise<void>((resolve) => this.socket.bind(0, this.address, () => resolve()));
    this.port = this.socket.address().port;
    return this;
  }

  close(): void {
    this.socket.close();
  }

  /** The server's URI, as REGISTER's Request-URI and the digest's `uri`. */
  get registrarUri(): string {
    return `sip:127.0.0.1:${this.serverPort}`;
  }

  /** One REGISTER (a CSeq above the last); resolves with the final response, rejects after 3 s. */
  sendRegister({ user, callId, expires, authorization }: RegisterRequest): Promise<SipResponse> {
    this.#cseq++;
    const lines = [
      `REGISTER ${this.registrarUri} SIP/2.0`,
      `Via: SIP/2.0/UDP ${this.address}:${this.port};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
      'Max-Forwards: 70',
      `From: <sip:${user}@127.0.0.1>;tag=${randomBytes(4).toString('hex')}`,
      `To: <sip:${user}@127.0.0.1>`,
      `Call-ID: ${callId}`,
      `CSeq: ${this.#cseq} REGISTER`,
      `Contact: <sip:${user}@${this.address}:${this.port}>`,
      `Expires: ${expires}`,
      ...(authorization ? [`Authorization: ${authorization}`] : []),
      'Content-Length: 0',
      '',
      '',
    ];
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer to REGISTER')), 3000);
      this.#waiter = (response) => {
        clearTimeout(timer);
        this.#waiter = undefined;
        resolve(response);
      };
      this.socket.send(lines.join('\r\n'), this.serverPort, '127.0.0.1');
    });
  }
}

/** The realm and nonce of a 401's WWW-Authenticate. */
export function challengeOf(response: SipResponse): { realm: string; nonce: string } {
  const header = response.get('www-authenticate') ?? '';
  const param = (name: string): string => new RegExp(`${name}="?([^",]*)"?`, 'i').exec(header)?.[1] ?? '';
  return { realm: param('realm'), nonce: param('nonce') };
}

/** The Authorization value answering `nonce` of `realm` for a REGISTER to `uri` (MD5, qop=auth, nc 1). */
export function registerAuthorization(user: string, password: string, realm: string, nonce: string, uri: string): string {
  const cnonce = randomBytes(4).toString('hex');
  const answer = digestResponse('MD5', digestHa1('MD5', user, realm, password), { method: 'REGISTER', uri, nonce, qop: 'auth', nc: '00000001', cnonce });
  return `Digest username="${user}", realm="${realm}", nonce="${nonce}", uri="${uri}", response="${answer}", algorithm=MD5, qop=auth, nc=00000001, cnonce="${cnonce}"`;
}
