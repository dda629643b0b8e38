// One ARI request from a bench: its status and body text, with the basic authorization given,
// over an agent's keep-alive sockets when one is given, and destroyed when it takes longer than
// `timeoutMs` (a stalled server must fail a bench run, not hang it). The originate benches, the
// cycle client and the cluster bench all send theirs this way.
import http from 'node:http';

export interface AriAnswer {
  readonly status: number;
  readonly body: string;
}

export interface AriRequestTarget {
  /** The server's base URL (only its host and port are used). */
  readonly base: URL;
  readonly authorization: string;
  readonly timeoutMs: number;
  readonly agent?: http.Agent;
}

export function ariRequest(target: AriRequestTarget, method: string, path: string): Promise<AriAnswer> {
  const { base, authorization, timeoutMs, agent } = target;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, method, path, ...(agent ? { agent } : {}), headers: { authorization } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
