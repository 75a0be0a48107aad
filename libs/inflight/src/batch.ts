import { checkInt } from '@warren/config';
/**
 * When a batch goes out: at the end of the current tick (`process.nextTick`,
 * the window ioredis' auto-pipelining uses), or at the end of the current
 * turn of the event loop (`setImmediate`), after every tick of it, so that
 * more of what the turn's callbacks push shares the batch. (Not so that a
 * reply published meanwhile leaves first: amqplib writes its frames from a
 * later immediate of its own.)
 */
export type BatchWindow = 'tick' | 'turn';

/**
 * Collects what is pushed within one window and sends it as one command: a
 * worker that takes 20 requests from one socket read claims them with one
 * script call instead of 20. `max` bounds a batch (and with it how long one
 * script holds Redis).
 */
export class Batcher<I, R> {
  private queue: { readonly item: I; readonly resolve: (r: R) => void; readonly reject: (e: unknown) => void }[] = [];
  private scheduled = false;
  /** What {@link sent} handed out for the items queued now: one promise however many ask. */
  private sentSignal: { readonly promise: Promise<void>; readonly resolve: () => void } | undefined;

  constructor(private readonly send: (items: readonly I[]) => Promise<readonly R[]>, private readonly max: number, private readonly window: BatchWindow = 'tick') {
    checkInt('batch size', max);
  }

  push(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.queue.length >= this.max) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        if (this.window === 'tick') process.nextTick(this.onTick);
        else setImmediate(this.onTick);
      }
    });
  }

  /** Resolves once what is queued now has been handed to `send` (written); undefined when nothing waits. */
  sent(): Promise<void> | undefined {
    if (this.queue.length === 0) return undefined;
    if (!this.sentSignal) {
      let resolve: () => void = () => undefined;
      const promise = new Promise<void>((r) => (resolve = r));
      this.sentSignal = { promise, resolve };
    }
    return this.sentSignal.promise;
  }

  private readonly onTick = (): void => {
    this.scheduled = false;
    this.flush();
  };

  private flush(): void {
    while (this.queue.length > 0) {
      const chunk = this.queue.splice(0, this.max);
      let sent: Promise<readonly R[]>;
      try {
        sent = this.send(chunk.map((c) => c.item));
      } catch (err) {
        sent = Promise.reject(err);
      }
      sent.then(
        (results) => {
          for (const [i, c] of chunk.entries()) {
            const result = results[i];
            if (result === undefined) c.reject(new Error(`batch reply has ${results.length} items for ${chunk.length}`));
            else c.resolve(result);
          }
        },
        (err: unknown) => {
          for (const c of chunk) c.reject(err);
        },
      );
    }
    const signal = this.sentSignal;
    this.sentSignal = undefined;
    signal?.resolve();
  }
}
