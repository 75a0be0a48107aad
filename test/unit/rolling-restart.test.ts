// `npm start -- --watch` restarts a service's instances one after another, each back and ready
// before the next stops, so the service keeps answering (scripts/rolling-restart.ts).
import { rollingRestarter } from '../../scripts/rolling-restart';

/** Fake children: every step is logged, and each start stays pending until the test marks it ready. */
function fakes() {
  const log: string[] = [];
  const ready = new Map<string, (up?: boolean) => void>();
  let started: (() => void) | undefined;
  return {
    log,
    steps: {
      stop: async (name: string) => {
        log.push(`stop ${name}`);
      },
      start: (name: string) =>
        new Promise<boolean>((resolve) => {
          log.push(`start ${name}`);
          ready.set(name, (up = true) => {
            log.push(up ? `ready ${name}` : `gone ${name}`);
            resolve(up);
          });
          started?.();
        }),
      onHalt: (name: string, kept: readonly string[]) => log.push(`halt at ${name}, kept ${kept.join(' ')}`),
    },
    /** Resolves once `name` has been started again and is waiting to be ready. */
    async started(name: string): Promise<void> {
      while (!ready.has(name)) await new Promise<void>((r) => (started = r));
    },
    /** Marks `name` ready, or (`up` false) exited instead of coming back. */
    ready(name: string, up = true): void {
      const r = ready.get(name);
      ready.delete(name);
      r?.(up);
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

it('stops the roll when a restarted instance does not come back, leaving the others serving', async () => {
  const f = fakes();
  const roller = rollingRestarter(f.steps);
  roller.request([['calc-1', 'calc-2', 'calc-3']]);
  await f.started('calc-1');
  f.ready('calc-1', false);
  await roller.idle();
  expect(f.log).toEqual(['stop calc-1', 'start calc-1', 'gone calc-1', 'halt at calc-1, kept calc-2 calc-3']);
  // The next change rolls them all again.
  roller.request([['calc-1', 'calc-2', 'calc-3']]);
  await f.started('calc-1');
  expect(f.log.at(-1)).toBe('start calc-1');
  f.ready('calc-1');
  await f.started('calc-2');
  f.ready('calc-2');
  await f.started('calc-3');
  f.ready('calc-3');
  await roller.idle();
});
