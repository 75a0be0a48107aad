import type { Logger } from '@warren/logger';
import type { AppliedControl, WorkerAction, WorkerControlMessage } from '../wire/worker-control';

/** What the controls need of the service they steer (service.ts gives them). */
export interface ControlledWorker {
  /** Cancels the work consumers (requests, events); taken deliveries run to their end. */
  stopWork(): Promise<void>;
  /** Starts the work consumers again. */
  startWork(): Promise<void>;
  /** Aborts every running call as cancelled; answers how many. */
  abortAll(): number;
  /** Resolves when nothing runs, or the grace period is over. */
  waitForRunning(): Promise<void>;
  /** The graceful close (withdraw, requeue what outlived the grace, close channels). */
  close(): Promise<void>;
  /** Publishes the instance's announcement now. */
  announce(): void;
  readonly log: Logger;
}

/**
 * An instance's operator controls (docs/protocol-discovery.md, "Worker controls"): pause and resume
 * consuming, drain (stop taking work, finish, close) and cancel every running call. State lives
 * here, in memory: a restarted instance consumes again. One control at a time, in arrival order,
 * so a pause then a resume never ends paused.
 */
export class WorkerControls {
  private pausedNow = false;
  private drainingNow = false;
  private lastApplied: AppliedControl | undefined;
  private queue: Promise<void> = Promise.resolve();
  private drainedSignal: (() => void) | undefined;
  /** Resolves once a drain has closed the instance: a service main then ends the process (runServiceMain's `drained`). */
  readonly drained: Promise<void>;

  constructor(private readonly worker: ControlledWorker) {
    this.drained = new Promise((resolve) => (this.drainedSignal = resolve));
  }

  get paused(): boolean {
    return this.pausedNow;
  }

  get draining(): boolean {
    return this.drainingNow;
  }

  /** The last control applied, announced so its sender sees it done. */
  get last(): AppliedControl | undefined {
    return this.lastApplied;
  }

  /** Cancels the work consumers; calls wait in the queue until {@link resume} (or another instance takes them). */
  pause(requestId = 'local'): Promise<void> {
    return this.run('pause', requestId, async () => {
      this.pausedNow = true;
      await this.worker.stopWork();
      return undefined;
    });
  }

  resume(requestId = 'local'): Promise<void> {
    return this.run('resume', requestId, async () => {
      if (this.drainingNow) return undefined;
      this.pausedNow = false;
      await this.worker.startWork();
      return undefined;
    });
  }

  /** Aborts every running call (each caller is answered -32003); resolves how many. */
  async cancelAll(requestId = 'local'): Promise<number> {
    let cancelled = 0;
    await this.run('cancel-all', requestId, () => {
      cancelled = this.worker.abortAll();
      return Promise.resolve(cancelled);
    });
    return cancelled;
  }

  /** Stops taking work, lets the running calls finish (within the shutdown grace), then closes the instance. */
  drain(requestId = 'local'): Promise<void> {
    return this.run('drain', requestId, async () => {
      this.drainingNow = true;
      await this.worker.stopWork();
      return undefined;
    }).then(async () => {
      // Announced as draining (with its running count) until the calls are done; then the close withdraws it.
      await this.worker.waitForRunning();
      await this.worker.close();
      this.drainedSignal?.();
    });
  }

  /** Applies a control heard on the bus. Never rejects: a failure is logged. */
  apply(control: WorkerControlMessage): Promise<void> {
    const done = ((): Promise<unknown> => {
      switch (control.action) {
        case 'pause':
          return this.pause(control.requestId);
        case 'resume':
          return this.resume(control.requestId);
        case 'drain':
          return this.drain(control.requestId);
        case 'cancel-all':
          return this.cancelAll(control.requestId);
        default: {
          const never: never = control.action;
          return Promise.resolve(never);
        }
      }
    })();
    return done.then(() => undefined, (err: unknown) => this.worker.log.warn({ err, action: control.action }, 'worker control failed'));
  }

  /** One control after the other; each says it is done in an announcement at once. */
  private run(action: WorkerAction, requestId: string, step: () => Promise<number | undefined>): Promise<void> {
    const next = this.queue.then(async () => {
      const cancelled = await step();
      this.lastApplied = { requestId, action, at: Date.now(), ...(cancelled === undefined ? {} : { cancelled }) };
      this.worker.log.info({ action, requestId, ...(cancelled === undefined ? {} : { cancelled }) }, 'worker control applied');
      this.worker.announce();
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}
