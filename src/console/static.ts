// Serves the web console's static files (docs/console.md). The files hold no secrets, so they are
// served without credentials; the page asks for an ARI user and password and then uses the public
// ARI like any other client. Only the names in CONSOLE_FILES exist: a request path is looked up in
// that fixed map and never joined to a directory, so no path can reach another file.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The console's URL path (after the `http.prefix`). */
export const CONSOLE_PATH = '/console';

interface ConsoleFile {
  readonly file: string;
  readonly contentType: string;
}

/**
 * Path after `/console` → file in `public/` (copied next to the compiled module by the build,
 * scripts/copy-console-assets.mjs). The page is `/console` itself so that its relative URLs
 * (`console/console.js`, `ari/...`, `media/...`) resolve under any `http.prefix`.
 */
const CONSOLE_FILES: ReadonlyMap<string, ConsoleFile> = new Map([
  ['', { file: 'index.html', contentType: 'text/html; charset=utf-8' }],
  ['/console.js', { file: 'console.js', contentType: 'text/javascript; charset=utf-8' }],
  // The modules console.js imports (relative to it, so under /console/ too).
  ...['actions.js', 'ari.js', 'cel-timeline.js', 'charts.js', 'cluster.js', 'dom.js', 'history.js', 'ladder.js', 'listen.js', 'quality.js', 'server-info.js', 'state.js', 'svg.js', 'timeline.js', 'views.js'].map((file): [string, ConsoleFile] => [`/${file}`, { file, contentType: 'text/javascript; charset=utf-8' }]),
  ['/console.css', { file: 'console.css', contentType: 'text/css; charset=utf-8' }],
]);

/**
 * Same-origin script, style and connections only; no inline script or style, no frames, no
 * plug-ins; recordings play from `blob:` URLs the page makes from fetched WAV files.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/** The console's files, read once at start-up, served from memory. */
export class ConsoleFiles {
  private readonly bodies = new Map<string, { body: Buffer; contentType: string }>();

  constructor(directory: URL = new URL('./public/', import.meta.url)) {
    for (const [path, { file, contentType }] of CONSOLE_FILES) {
      this.bodies.set(path, { body: readFileSync(new URL(file, directory)), contentType });
    }
  }

  /**
   * The console's files, or undefined (and a warning) when they are missing: a build that ran
   * only tsc, without copying them, still starts, with /console answering 404.
   */
  static load(log: { warn(details: Record<string, unknown>, message: string): void }, directory?: URL): ConsoleFiles | undefined {
    try {
      return new ConsoleFiles(directory);
    } catch (err) {
      log.warn({ err }, 'web console files not found (run npm run build); /console is not served');
      return undefined;
    }
  }

  /** Whether a request path (after the prefix) is the console's. */
  owns(pathname: string): boolean {
    return pathname === CONSOLE_PATH || pathname.startsWith(`${CONSOLE_PATH}/`);
  }

  /** Answers a request whose path `owns()` accepted. */
  serve(request: IncomingMessage, response: ServerResponse, pathname: string): void {
    request.resume();
    const method = request.method ?? 'GET';
    const rest = pathname.slice(CONSOLE_PATH.length);
    if (rest === '/') {
      // `/console/` would make the page's relative URLs resolve one level too deep.
      return end(response, 301, { Location: '../console' });
    }
    const entry = this.bodies.get(rest);
    if (!entry) return end(response, 404, { 'Content-Type': 'application/json' }, Buffer.from('{"message":"Resource not found"}'));
    if (method !== 'GET' && method !== 'HEAD') {
      return end(response, 405, { Allow: 'GET,HEAD', 'Content-Type': 'application/json' }, Buffer.from('{"message":"Invalid method"}'));
    }
    end(response, 200, { ...SECURITY_HEADERS, 'Content-Type': entry.contentType }, entry.body, method === 'HEAD');
  }
}

function end(response: ServerResponse, status: number, headers: Record<string, string>, body?: Buffer, headOnly = false): void {
  response.writeHead(status, { ...headers, 'X-Content-Type-Options': 'nosniff', 'Content-Length': body?.length ?? 0 });
  response.end(headOnly ? undefined : body);
}
