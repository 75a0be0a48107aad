// A pool of worker processes (scripts/soak-worker.ts, spawned by the rig)
// that respawns each one that dies, as a process supervisor would, so the
// pool keeps its size whether a test kills a worker or a poison message does.
import type { TsChild } from '@warren/testkit';
import type { FaultRig } from './rig';

export class RespawningPool {
  /** Instance ids of the workers that died, in order. */
  readonly died: string[] = [];
  readonly live = new Map<string, TsChild>();
  /** How long each worker took from spawn to `ready`, ms (a figure: while all are down, nothing is served). */
  readonly startMs: number[] = [];
  /** When each worker was ready and when it died, ms since the pool started. */
  readonly timeline: string[] = [];
  private readonly t0 = Date.now();
  private next = 0;
  private stopped = false;
  private respawning: Promise<unknown>[] = [];

  private constructor(private readonly rig: FaultRig, private readonly env: Record<string, string>) {}

  static async start(rig: FaultRig, size: number, env: Record<string, string> = {}): Promise<RespawningPool> {
    const pool = new RespawningPool(rig, env);
    await Promise.all(Array.from({ length: size }, () => pool.spawn()));
    return pool;
  }

  /** SIGKILLs one live worker (the oldest); the pool respawns it. */
  async kill(): Promise<string> {
    const [id, child] = [...this.live][0] ?? [];
    if (!id || !child) throw new Error('no live worker to kill');
    await child.kill('SIGKILL');
    return id;
  }

  /** Stops respawning, and waits for the respawns under way (teardown kills what is left). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled(this.respawning);
  }

  private async spawn(): Promise<void> {
    const id = `p${this.next++}`;
    const spawnedAt = Date.now();
    const child = await this.rig.spawnWorker(id, this.env);
    this.startMs.push(Date.now() - spawnedAt);
    this.timeline.push(`${id} up ${Date.now() - this.t0}`);
    this.live.set(id, child);
    void child.exited.then(() => {
      this.live.delete(id);
      this.timeline.push(`${id} died ${Date.now() - this.t0}`);
      this.died.push(id);
      if (!this.stopped) this.respawning.push(this.spawn());
    });
  }
}
