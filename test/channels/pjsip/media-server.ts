// The server the SIP media tests call (media.test.ts, media-metrics.test.ts): extension 100 into
// Stasis(media-app), RTCP every 500 ms, and one endpoint per behaviour under test (plain, natted
// with symmetric RTP, muxer with rtcp_mux, tones/auto/infos by dtmf_mode); with what every test does
// with it — the next app event, ARI requests, a call answered through ARI, GET /metrics, a hang-up.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before } from 'node:test';
import { parsePrometheus } from '../../helpers/prometheus.ts';
import { startTestServer, type EventSocket, type TestServer } from '../../helpers/server.ts';
import { Phone } from './media-phone.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export interface MediaServer {
  readonly server: TestServer;
  /** The server's work directory (its dialplan; a test's own files may go beside it). */
  readonly work: string;
  /** A phone calling as endpoint `user` (not opened yet). */
  phone(user: string): Phone;
  nextEvent(match: (event: Json) => boolean, timeoutMs?: number): Promise<Json>;
  post(path: string, method?: string): Promise<Response>;
  /** Answers the next call of `phone` into media-app; returns the channel id and the 200's text. */
  answerNext(phone: Phone, sdp: string): Promise<{ id: string; answer: string }>;
  /** GET /metrics, checked as Prometheus text. */
  scrape(): Promise<Map<string, number>>;
  /** Scrapes until `probe` holds (the figures a hang-up adds land as the call ends). */
  scrapeUntil(what: string, probe: (samples: Map<string, number>) => boolean, timeoutMs?: number): Promise<Map<string, number>>;
  hangUp(phone: Phone, id: string): Promise<void>;
}

/** Registers, in the calling test file, the server started before its tests and stopped after them. */
export function useMediaServer(): MediaServer {
  let work: string | undefined;
  let server: TestServer | undefined;
  let events: EventSocket | undefined;
  const started = (): TestServer => {
    if (!server) throw new Error('the media server starts before the first test');
    return server;
  };

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-sip-media-'));
    const dialplanFile = join(work, 'extensions.conf');
    writeFileSync(dialplanFile, '[media-in]\nexten => 100,1,Stasis(media-app)\n');
    const endpoint = (extra: Record<string, string> = {}) => ({ context: 'media-in', allow: 'ulaw', ...extra });
    server = await startTestServer({
      sip: { rtcp_interval_ms: 500 },
      config_objects: {
        res_pjsip: {
          endpoint: {
            plain: endpoint(),
            // Symmetric RTP is the endpoint's choice (rtp_symmetric, default no, as in Asterisk).
            natted: endpoint({ rtp_symmetric: 'yes' }),
            muxer: endpoint({ rtcp_mux: 'yes' }),
            tones: endpoint({ dtmf_mode: 'inband' }),
            auto: endpoint({ dtmf_mode: 'auto' }),
            infos: endpoint({ dtmf_mode: 'info' }),
          },
        },
      },
      dialplan: { file: dialplanFile },
    } as never);
    events = await server.events('app=media-app&subscribeAll=true');
  });

  after(async () => {
    await events?.close();
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  // A test that fails mid-call (a timeout on a loaded machine) would leave its call up and fail the
  // later tests that count calls: every call still up after a test is hung up here.
  afterEach(async () => {
    const running = started();
    const left = (await (await running.ari('/channels')).json()) as Array<{ id: string }>;
    for (const channel of left) await running.ari(`/channels/${channel.id}`, { method: 'DELETE' });
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && ((await (await running.ari('/channels')).json()) as unknown[]).length > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  });

  const nextEvent = async (match: (event: Json) => boolean, timeoutMs = 10_000): Promise<Json> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = (await events!.next(Math.max(1, deadline - Date.now()))) as Json;
      if (match(event)) return event;
    }
  };
  const post = (path: string, method = 'POST'): Promise<Response> => started().ari(path, { method });
  const scrape = async (): Promise<Map<string, number>> => {
    const response = await fetch(`${started().url}/metrics`);
    assert.equal(response.status, 200);
    return parsePrometheus(await response.text());
  };

  return {
    get server() {
      return started();
    },
    get work() {
      started();
      return work!;
    },
    phone: (user) => new Phone(user, started().core.pjsip.port),
    nextEvent,
    post,
    scrape,
    async answerNext(phone, sdp) {
      const calling = phone.call(sdp);
      const start = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.name?.startsWith(`PJSIP/${phone.user}-`));
      const id = start.channel.id as string;
      assert.equal((await post(`/channels/${id}/answer`)).status, 204);
      return { id, answer: await calling };
    },
    async scrapeUntil(what, probe, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const samples = await scrape();
        if (probe(samples)) return samples;
        if (Date.now() > deadline) throw new Error(`timed out waiting for /metrics: ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async hangUp(phone, id) {
      assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
      await phone.nextMessage(/^BYE /);
      await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id);
    },
  };
}
