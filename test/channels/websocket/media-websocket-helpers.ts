// The application's side of a media WebSocket (chan_websocket) and the audio it exchanges, shared
// by the media WebSocket suites: a client connecting to /media/<id> as an application would, a
// WebSocket server Patchbay connects to in client mode, and tones as µ-law or slin bytes.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { linearToUlaw, ulawToLinear } from '../../../src/media/g711.ts';
import { AUTH, type TestServer } from '../../helpers/server.ts';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitUntil(what: string, condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

// ---- the application's side of a media WebSocket -------------------------------------------------

/** One media WebSocket as the application sees it: text events and binary audio, in order. */
export class MediaApp {
  readonly texts: string[] = [];
  readonly audio: Buffer[] = [];
  closeCode: number | undefined;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) this.audio.push(Buffer.from(data as Buffer));
      else this.texts.push(String(data));
    });
    ws.on('close', (code) => {
      this.closeCode = code;
    });
    ws.on('error', () => undefined);
  }

  /** Connects to /media/<id>; rejects with the HTTP status when the upgrade is refused. */
  static connect(server: TestServer, id: string, protocols: string[] = ['media']): Promise<MediaApp> {
    // A read-write ARI user's credentials: /media/ asks for them besides the id.
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/media/${id}`, protocols, { headers: { authorization: AUTH } });
    const app = new MediaApp(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(app));
      ws.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += String(chunk)));
        response.on('end', () => reject(Object.assign(new Error(`refused ${response.statusCode}: ${body}`), { status: response.statusCode, body })));
      });
      ws.once('error', reject);
    });
  }

  /** The first text event (from index `from` on) that starts with `prefix` (plain) or has `event` (JSON). */
  async event(name: string, from = 0, timeoutMs = 3000): Promise<string> {
    const matches = (text: string): boolean => text === name || text.startsWith(`${name} `) || text.includes(`"event":"${name}"`);
    await waitUntil(`${name} arrives`, () => this.texts.slice(from).some(matches), timeoutMs);
    return this.texts.slice(from).find(matches)!;
  }

  send(data: Buffer | string): Promise<void> {
    return new Promise((resolve, reject) => this.ws.send(data, (error) => (error ? reject(error) : resolve())));
  }

  /**
   * Sends the messages in one TCP write: the socket is corked around them, so Patchbay reads them
   * in one chunk and handles them in one turn, within one rate window however loaded the machine
   * is (message by message, a loaded sender spreads them over seconds). `ws` keeps its socket private.
   */
  burst(messages: readonly string[]): Promise<void> {
    const socket = (this.ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.cork();
    const sent = Promise.all(messages.map((message) => this.send(message)));
    socket.uncork();
    return sent.then(() => undefined);
  }

  waitClosed(): Promise<void> {
    return waitUntil('the media WebSocket closes', () => this.closeCode !== undefined);
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close();
  }
}

// ---- the test WebSocket server for client mode -------------------------------------------------

export class MediaServer {
  readonly upgrades: IncomingMessage[] = [];
  readonly apps: MediaApp[] = [];
  private constructor(readonly wss: WebSocketServer) {
    wss.on('connection', (ws, request) => {
      this.upgrades.push(request);
      this.apps.push(new MediaApp(ws));
    });
  }

  static async open(): Promise<MediaServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (offered) => (offered.has('media') ? 'media' : false) });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    return new MediaServer(wss);
  }

  get port(): number {
    return (this.wss.address() as AddressInfo).port;
  }

  close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }
}

// ---- audio -----------------------------------------------------------------------------------------

/** `ms` of a sine as µ-law bytes. */
export function ulawTone(ms: number, frequency: number, amplitude: number): Buffer {
  const count = (8000 * ms) / 1000;
  const out = Buffer.alloc(count);
  for (let n = 0; n < count; n++) out[n] = linearToUlaw(Math.round(amplitude * Math.sin((2 * Math.PI * frequency * n) / 8000)));
  return out;
}

export function slinTone(ms: number, frequency: number, amplitude: number): Buffer {
  const count = (8000 * ms) / 1000;
  const out = Buffer.alloc(count * 2);
  for (let n = 0; n < count; n++) out.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * frequency * n) / 8000)), n * 2);
  return out;
}

export function decodeUlaw(bytes: Buffer): Int16Array {
  return Int16Array.from(bytes, (code) => ulawToLinear(code));
}

export function decodeSlin(bytes: Buffer): Int16Array {
  const out = new Int16Array(bytes.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readInt16LE(i * 2);
  return out;
}

/** The loud frames, the first and last dropped (edges), joined. */
export function loudSamples(frames: readonly Int16Array[], threshold: number): { samples: Int16Array; count: number } {
  const loud = frames.filter((frame) => Math.sqrt(frame.reduce((sum, sample) => sum + sample * sample, 0) / frame.length) > threshold);
  const inner = loud.slice(1, -1);
  const samples = new Int16Array(inner.reduce((sum, frame) => sum + frame.length, 0));
  let offset = 0;
  for (const frame of inner) {
    samples.set(frame, offset);
    offset += frame.length;
  }
  return { samples, count: loud.length };
}
