// `npm start -- --watch` restarts a service's instances one after another, so the service keeps
// answering while its code changes: instance 2 is stopped only once instance 1 is back and ready.
// Restarting every instance at once left a window with no consumer, in which calls got -32002.
// Pure over three steps (stop, start, ready) so the order is tested with fake children.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** How one instance is restarted; start.ts gives real processes, tests fakes. */
export interface RestartSteps {
  /** Stops the instance (one SIGTERM, its drain bounded); resolves once it is gone. */
  stop(name: string): Promise<void>;
  /**
   * Starts it again; resolves once it is ready (or gone, or given up on): the next instance waits for
   * this. False when it did not come back (it exited): the roll stops there, so the instances not yet
   * restarted keep serving the old code until the next change.
   */
  start(name: string): Promise<boolean>;
  /** Told when a roll stops early because `name` did not come back; `kept` are the instances left running as they were. */
  onHalt?(name: string, kept: readonly string[]): void;
}

export interface RollingRestarter {
  /** Restarts the instances of each group in turn, groups side by side; a group already queued is not queued twice. */
  request(groups: readonly (readonly string[])[]): void;
  /** Resolves once every restart requested so far is done. */
  idle(): Promise<void>;
}

/**
 * One roll at a time per group (keyed by its instance names): a change during a roll queues exactly
 * one more, which starts when the current one ends.
 *
 * @example
 * const roller = rollingRestarter({ stop, start });
 * roller.request([['calculator-1', 'calculator-2'], ['broker']]);
 */
export function rollingRestarter(steps: RestartSteps): RollingRestarter {
  const chains = new Map<string, Promise<void>>();
  const queued = new Set<string>();
  const roll = async (group: readonly string[]): Promise<void> => {
    for (const [i, name] of group.entries()) {
      await steps.stop(name);
      if (!(await steps.start(name))) {
        const kept = group.slice(i + 1);
        if (kept.length > 0) steps.onHalt?.(name, kept);
        return;
      }
    }
  };
  return {
    request(groups) {
      for (const group of groups) {
        const key = group.join('\0');
        if (queued.has(key)) continue;
        queued.add(key);
        const next = (chains.get(key) ?? Promise.resolve()).then(() => {
          queued.delete(key);
          return roll(group);
        });
        // A step that throws ends that roll, not the watch.
        chains.set(key, next.catch(() => undefined));
      }
    },
    async idle() {
      await Promise.all(chains.values());
    },
  };
}

/** A log line saying a process is ready: the services' `service ready`, the broker's `broker ready`. */
const readyLine = /"msg":"[^"]*\bready"/;

/**
 * Resolves once `child` is ready: its /readyz on `opsUrl` answers 200, or it logs a line saying
 * it is ready, or it exits (nothing left to wait for), or `boundMs` pass. Never rejects.
 */
export function whenReady(child: ChildProcess, opts: { readonly opsUrl?: string; readonly boundMs: number; readonly pollMs?: number }): Promise<void> {
  return new Promise<void>((resolve) => {
    let done = false;
    const timers: NodeJS.Timeout[] = [];
    // A listener beside start.ts's own reader (a second readline would pause the stream when closed).
    let tail = '';
    const onData = (chunk: Buffer): void => {
      const text = tail + chunk.toString();
      const cut = text.lastIndexOf('\n');
      tail = text.slice(cut + 1);
      if (text.slice(0, cut + 1).split('\n').some((line) => readyLine.test(line))) finish();
    };
    const finish = (): void => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      child.stdout?.off('data', onData);
      resolve();
    };
    child.stdout?.on('data', onData);
    void once(child, 'exit').then(finish);
    timers.push(setTimeout(finish, opts.boundMs));
    const poll = (): void => {
      if (done || opts.opsUrl === undefined) return;
      fetch(`${opts.opsUrl}/readyz`).then(
        (res) => (res.status === 200 ? finish() : timers.push(setTimeout(poll, opts.pollMs ?? 100))),
        () => timers.push(setTimeout(poll, opts.pollMs ?? 100)),
      );
    };
    poll();
  });
}
