import type { OnOpen, WireModel } from './contract';

/**
 * The setups a connection re-runs on every fresh model (topology, consumers), in the order they were
 * registered. One list for every WireConnection, the AMQP one and the in-memory one alike.
 */
export class Setups {
  private readonly list: OnOpen[] = [];

  /** Registers `setup` and, if a model is open now, runs it on that one. Returns the unregister function. */
  async add(setup: OnOpen, current: WireModel | undefined): Promise<() => void> {
    this.list.push(setup);
    if (current) await setup(current);
    return () => {
      const i = this.list.indexOf(setup);
      if (i >= 0) this.list.splice(i, 1);
    };
  }

  /** Runs every setup on `model`, one at a time; `lost` (a promise that rejects when the model dies) ends the wait early. */
  async runOn(model: WireModel, lost?: Promise<never>): Promise<void> {
    for (const setup of [...this.list]) await (lost ? Promise.race([setup(model), lost]) : setup(model));
  }
}
