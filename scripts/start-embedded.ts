// `npm start` in embedded mode (start-mode.ts decides): the whole system in this one process over
// memory (embedded.ts), with a banner nobody can miss, the same log lines as the processes print
// (each prefixed by the name the process would have), and a graceful stop on SIGINT/SIGTERM.
import { envValue } from '@warren/config';
import { createLogger } from '@warren/logger';
import { startTracing } from '@warren/tracing-node';
import { startEmbedded, type EmbeddedSystem } from './embedded';
import type { lineFormatter } from './log-format';

/** Printed before anything else starts: it says what this run is not. */
export function embeddedBanner(why: string): string {
  const rule = '='.repeat(78);
  return [
    rule,
    '  WARREN IS RUNNING EMBEDDED: ONE PROCESS, EVERYTHING IN MEMORY, NOTHING DURABLE',
    `  Why: ${why}.`,
    '  The broker, calculator x2, audit and jobs x2 run in this process over an in-memory',
    '  broker and stores. Queues, jobs, in-flight records and the audit log are lost when',
    '  it stops; there is no second process, so no crash recovery either.',
    '  For RabbitMQ and Redis: set AMQP_URL and REDIS_URL, run them on the default ports,',
    '  or make a Docker engine reachable (docs/embedded.md, README "Ways to run it").',
    rule,
    '',
  ].join('\n');
}

/** Runs until a signal; resolves never, exits the process when stopped. */
export async function runEmbedded(why: string, format: ReturnType<typeof lineFormatter>): Promise<void> {
  const level = envValue(process.env, 'LOG_LEVEL');
  process.stdout.write(embeddedBanner(why));
  // One process, one SDK: every part's spans carry service.name `warren` unless OTEL_SERVICE_NAME says otherwise.
  const tracing = startTracing(process.env, { serviceName: 'warren' });
  const logger = (name: string) => createLogger({ name: name === 'broker' ? 'warren-broker' : name.replace(/-\d+$/, ''), level, destination: { write: (line: string) => void process.stdout.write(format(name, line.replace(/\n$/, ''))) } });
  let stopping = false;
  // Filled once started; a signal before that stops the start instead.
  const running: { system?: EmbeddedSystem } = {};
  const stop = (): void => {
    // A terminal's Ctrl-C reaches this process and the tsx runner that relays it: one stop, as in start.ts.
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      process.stderr.write('warren: embedded system did not stop within 20 s; exiting\n');
      process.exit(1);
    }, 20_000).unref();
    void (running.system?.close() ?? Promise.resolve()).then(() => tracing.shutdown()).then(
      () => {
        process.stdout.write('warren: embedded system stopped\n');
        process.exit(0);
      },
      (err: unknown) => {
        process.stderr.write(`warren: embedded system failed to stop: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const system = await startEmbedded(process.env, logger);
  running.system = system;
  if (stopping) {
    await system.close();
    return;
  }
  process.stdout.write(`warren: embedded (in memory, not durable); gateway and console at ${system.url}/, gateway auth ${process.env['GATEWAY_AUTH'] === 'none' ? 'off (GATEWAY_AUTH=none)' : 'on'}; try: npx warren call add 4 5\n`);
}
