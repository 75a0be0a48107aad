// `npm start -- --watch` restarts a service's instances one after another, each back and ready
// before the next stops, so the service keeps answering (scripts/rolling-restart.ts).
import { rollingRestarter } from '../../scripts/rolling-restart';

/** Fake children: every step is logged, and each start stays pending until the test marks it ready. */
function fakes() {
  const log: string[] = [];
  const ready = new Map<string, () => void>();
  let started: (() => void) | undefined;
  return {
    log,
    steps: {
      stop: async (name: string) => {
        log.push(`stop ${name}`);
      },
      start: (name: string) =>
        new Promise<void>((resolve) => {
          log.push(`start ${name}`);
          ready.set(name, () => {
            log.push(`ready ${name}`);
            resolve();
          });
          started?.();
        }),
    },
    /** Resolves once `name` has been started again and is waiting to be ready. */
    async started(name: string): Promise<void> {
      while (!ready.has(name)) await new Promise<void>((r) => (started = r));
    },
    ready(name: string): void {
      const r = ready.get(name);
      ready.delete(name);
      r?.();
    },
  };
}

it('stops the second instance only once the first is ready again', async () => {
  const f = fakes();
  const roller = rollingRestarter(f.steps);
  roller.request([['calc-1', 'calc-2']]);
  await f.started('calc-1');
  expect(f.log).toEqual(['stop calc-1', 'start calc-1']);
  f.ready('calc-1');
  await f.started('calc-2');
  f.ready('calc-2');
  await roller.idle();
  expect(f.log).toEqual(['stop calc-1', 'start calc-1', 'ready calc-1', 'stop calc-2', 'start calc-2', 'ready calc-2']);
});

it('rolls different services side by side', async () => {
  const f = fakes();
  const roller = rollingRestarter(f.steps);
  roller.request([['calc-1', 'calc-2'], ['audit']]);
  await f.started('calc-1');
  await f.started('audit');
  expect(f.log).toEqual(['stop calc-1', 'stop audit', 'start calc-1', 'start audit']);
  f.ready('audit');
  f.ready('calc-1');
  await f.started('calc-2');
  f.ready('calc-2');
  await roller.idle();
});

it('queues one more roll for changes during a roll, not one per change', async () => {
  const f = fakes();
  const roller = rollingRestarter(f.steps);
  roller.request([['calc-1']]);
  await f.started('calc-1');
  roller.request([['calc-1']]);
  roller.request([['calc-1']]);
  f.ready('calc-1');
  await f.started('calc-1');
  f.ready('calc-1');
  await roller.idle();
  expect(f.log).toEqual(['stop calc-1', 'start calc-1', 'ready calc-1', 'stop calc-1', 'start calc-1', 'ready calc-1']);
});
