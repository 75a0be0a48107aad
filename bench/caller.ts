/**
 * A caller process of the bench (one per target):
 *
 *   node --import tsx bench/caller.ts '<CallerSpec as JSON>'
 *
 * Builds the client the spec names, prints `{"op":"ready"}`, then answers one JSON line per command
 * on stdin: `{"op":"warmup","concurrency":C,"calls":N}` → `{"op":"warmed","errors":E}`, and
 * `{"op":"measure",...}` → `{"op":"measured",...Measured}`. The end of stdin or SIGTERM closes the
 * client and exits.
 */
import { createInterface } from 'node:readline';
import { openCaller, type CallerSpec } from './callers';
import { drive, measure } from './drive';

interface Command {
  readonly op: 'warmup' | 'measure';
  readonly concurrency: number;
  readonly calls: number;
}

function send(message: object): void {
  process.stdout.write(JSON.stringify(message) + '\n');
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '') as CallerSpec;
  const caller = await openCaller(spec);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= caller.stop().finally(() => process.exit(0)));
  process.on('SIGTERM', () => void stop());
  // Commands run one at a time, in order: the bench process waits for each answer before the next.
  let queue: Promise<void> = Promise.resolve();
  createInterface({ input: process.stdin })
    .on('line', (line) => {
      const command = JSON.parse(line) as Command;
      queue = queue.then(async () => {
        if (command.op === 'warmup') send({ op: 'warmed', errors: await drive(caller.call, command.concurrency, command.calls, null) });
        else send({ op: 'measured', ...(await measure(caller.call, command.concurrency, command.calls)) });
      });
    })
    .on('close', () => void queue.then(stop));
  send({ op: 'ready' });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
