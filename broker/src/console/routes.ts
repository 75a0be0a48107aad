import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { mayWatchFeed, type Asker } from '../authz';
import { sendRefusal } from '../http/errors';
import { ConsoleFeed, type ConsoleFeedDeps } from './feed';
import { consolePage, notBuiltPage } from './page';
import { resolveConsoleOptions, type ConsoleOptions } from './options';

/** Where `npm run build:console` writes the bundle (the same folder from src/ under tsx and from dist/ compiled). */
export const consoleAssetsDir = path.resolve(__dirname, '..', '..', 'dist', 'console-assets');

/**
 * The console: `GET /` (the page), `GET /console/assets/*` (its bundle) and
 * `GET /console/events` (the live feed, behind the bearer token like the
 * API the page calls). The page and its assets are public: a browser cannot
 * send a bearer token when it navigates; the page asks for the token and
 * sends it on every fetch. Returns the feed (closed by the app's preClose).
 */
export async function registerConsole(app: FastifyInstance, deps: ConsoleFeedDeps, options: ConsoleOptions = {}, assetsDir = consoleAssetsDir): Promise<ConsoleFeed | undefined> {
  const o = resolveConsoleOptions(options);
  if (!o.enabled) return undefined;
  const built = existsSync(path.join(assetsDir, 'app.js'));
  const files = new Set(built ? readdirSync(assetsDir) : []);
  const page = consolePage(built ? fingerprint(assetsDir, files) : 'none');
  // `page`: the security-headers hook gives these routes the page CSP instead of the API's.
  const html = { public: true, page: true };

  app.get('/', { config: html }, async (_request, reply) => {
    void reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8');
    return built ? page : reply.code(503).send(notBuiltPage);
  });

  if (built) {
    await app.register(fastifyStatic, { root: assetsDir, serve: false, decorateReply: true });
    app.get<{ Params: { file: string } }>('/console/assets/:file', { config: html }, (request, reply) => {
      // Only what the build wrote is served: no directory walk, no other file.
      if (!files.has(request.params.file)) return reply.code(404).type('text/plain').send('not found');
      return reply.header('cache-control', 'no-cache').sendFile(request.params.file);
    });
  }

  const feed = new ConsoleFeed(deps, o);
  app.get('/console/events', async (request, reply) => {
    // The feed shows every call of the cluster: a client token is told it is valid but not an operator's (403, not 401).
    // No principal: the console mounted on an app without the access hook (tests), nobody to tell apart.
    const principal = request.principal as Asker | null;
    if (principal !== null && !mayWatchFeed(principal)) return sendRefusal(reply, 'WARREN_GW_OPERATOR_REQUIRED');
    if (!feed.hasRoom()) return sendRefusal(reply, 'WARREN_GW_TOO_MANY_SESSIONS', { limit: o.maxClients });
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    feed.attach(request.raw, reply.raw);
  });
  app.addHook('preClose', async () => feed.close());
  return feed;
}

/** A short hash of the bundle, so a browser never mixes a new page with an old cached bundle. */
function fingerprint(dir: string, files: ReadonlySet<string>): string {
  const hash = createHash('sha256');
  for (const f of [...files].sort()) hash.update(f).update(readFileSync(path.join(dir, f)));
  return hash.digest('hex').slice(0, 12);
}
