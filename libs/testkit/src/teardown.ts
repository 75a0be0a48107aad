/** A cleanup step: may be sync or async; its result is ignored. */
export type TeardownStep = () => unknown;

/**
 * Registry of cleanup steps, so a test that opens sockets, connections,
 * proxies or child processes releases all of them even when it fails half-way
 * (and jest does not report "open handles" or hang on exit).
 *
 * `run()` runs the steps last-added first (close what depends on a resource
 * before the resource), runs every step even if some fail, then throws one
 * `AggregateError` with every failure. Each step runs at most once: calling
 * `run()` again, or concurrently, does not repeat it.
 */
export class Teardown {
  private readonly steps: TeardownStep[] = [];
  private running: Promise<void> | undefined;

  /** Registers a step; returns `this` for chaining. */
  add(step: TeardownStep): this {
    this.steps.push(step);
    return this;
  }

  /** Number of steps not yet run. */
  get size(): number {
    return this.steps.length;
  }

  /** Runs pending steps in reverse order; rejects with `AggregateError` if any failed. */
  run(): Promise<void> {
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async drain(): Promise<void> {
    const errors: unknown[] = [];
    let ran = 0;
    // Steps added while draining (a step registering another) also run.
    for (let step = this.steps.pop(); step !== undefined; step = this.steps.pop()) {
      ran += 1;
      try {
        await step();
      } catch (error: unknown) {
        errors.push(error);
      }
    }
    if (errors.length > 0) {
      throw new AggregateError(errors, `Teardown: ${errors.length} of ${ran} step(s) failed`);
    }
  }
}
