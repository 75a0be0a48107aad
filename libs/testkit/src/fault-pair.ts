import type { Socket } from 'node:net';

/** Knobs shared by every connection of one proxy, read on each chunk. */
export interface FaultSettings {
  stalled: boolean;
  latencyMs: number;
}

interface Chunk {
  readonly data: Buffer;
  readonly dueAt: number;
}

const ignore = (): void => undefined;

/** Closes `socket` with a TCP RST when possible (peer sees ECONNRESET), else destroys it. */
export function hardClose(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    // resetAndDestroy on a still-connecting socket waits for the connect; do not.
    if (!socket.connecting && typeof socket.resetAndDestroy === 'function') {
      socket.resetAndDestroy();
      return;
    }
  } catch {
    // Fall through: the handle is gone or not TCP.
  }
  socket.destroy();
}

/**
 * One direction of a proxied connection: reads `from`, writes `to`, in order,
 * each chunk held until `latencyMs` after it arrived and while stalled.
 * Owns at most one timer; `kill()` clears it and drops queued bytes.
 */
class Lane {
  private readonly queue: Chunk[] = [];
  private timer: NodeJS.Timeout | undefined;
  private blocked = false;
  private finishing: 'end' | 'destroy' | undefined;
  private ended = false;
  private dead = false;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    private readonly settings: FaultSettings,
  ) {
    from.on('data', (data: Buffer) => this.push(data));
    from.on('end', () => this.finish('end'));
    to.on('drain', () => {
      this.blocked = false;
      this.flow();
    });
    this.flow();
  }

  /** After queued bytes: half-close `to` ('end') or close it ('destroy', source is gone). */
  finish(mode: 'end' | 'destroy'): void {
    if (this.dead) return;
    if (mode === 'destroy' || this.finishing === undefined) this.finishing = mode;
    this.pump();
  }

  /** Stops forwarding for good: the destination is gone. */
  kill(): void {
    this.dead = true;
    this.clearTimer();
    this.queue.length = 0;
  }

  /** Re-reads the settings (stall/resume) and forwards whatever is due. */
  pump(): void {
    if (this.dead) return;
    this.clearTimer();
    if (!this.settings.stalled) this.forwardDue();
    this.flow();
  }

  private push(data: Buffer): void {
    if (this.dead) return;
    this.queue.push({ data, dueAt: performance.now() + this.settings.latencyMs });
    // A pending timer already covers an earlier chunk; this one waits behind it.
    if (this.timer === undefined) this.pump();
  }

  private forwardDue(): void {
    const now = performance.now();
    for (let head = this.queue[0]; head !== undefined; head = this.queue[0]) {
      if (head.dueAt > now) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, Math.ceil(head.dueAt - now));
        return;
      }
      this.queue.shift();
      if (!this.to.write(head.data)) this.blocked = true;
    }
    if (this.finishing === 'destroy') {
      this.dead = true;
      this.to.destroySoon();
    } else if (this.finishing === 'end' && !this.ended) {
      this.ended = true;
      this.to.end();
    }
  }

  /** Reads only while not stalled and the destination keeps up. */
  private flow(): void {
    if (this.settings.stalled || this.blocked) this.from.pause();
    else if (this.from.isPaused()) this.from.resume();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * A client socket and its upstream socket, forwarding both ways. A clean close
 * of one side is passed on after the queued bytes; an error close (reset,
 * refused upstream) resets the other side at once, as a real network would.
 */
export class FaultPair {
  private readonly up: Lane;
  private readonly down: Lane;
  private disposed = false;

  constructor(
    private readonly client: Socket,
    private readonly upstream: Socket,
    settings: FaultSettings,
    private readonly onDispose: (pair: FaultPair) => void,
  ) {
    client.on('error', ignore);
    upstream.on('error', ignore);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    this.up = new Lane(client, upstream, settings);
    this.down = new Lane(upstream, client, settings);
    client.on('close', (hadError: boolean) => this.sideClosed(this.up, this.down, hadError));
    upstream.on('close', (hadError: boolean) => this.sideClosed(this.down, this.up, hadError));
  }

  /** Applies changed settings (stall, resume) to both directions. */
  pump(): void {
    this.up.pump();
    this.down.pump();
  }

  /** Closes both sockets now: with RST if `reset`, else a plain destroy. */
  destroy(reset: boolean): void {
    if (this.disposed) return;
    this.dispose();
    for (const socket of [this.client, this.upstream]) {
      if (reset) hardClose(socket);
      else socket.destroy();
    }
  }

  private sideClosed(fromClosed: Lane, intoClosed: Lane, hadError: boolean): void {
    if (this.disposed) return;
    intoClosed.kill();
    if (hadError) {
      this.destroy(true);
      return;
    }
    fromClosed.finish('destroy');
    if (this.client.destroyed && this.upstream.destroyed) this.dispose();
  }

  private dispose(): void {
    this.disposed = true;
    this.up.kill();
    this.down.kill();
    this.onDispose(this);
  }
}
