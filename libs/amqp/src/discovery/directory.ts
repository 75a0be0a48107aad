/**
 * A method → service directory that outlives instances. Announcements only
 * tell a registry about services that are alive; a caller that starts after
 * every instance of a service stopped has heard nothing, yet that is exactly
 * when it needs to know which queue to check (availability.ts). So services
 * also record their methods somewhere durable, and callers look them up there.
 * The Redis implementation is @warren/inflight's `RedisDirectory`; its keys
 * are in docs/protocol.md, "Method directory".
 */

/** One method as a service records it. */
export interface DirectoryMethod {
  readonly name: string;
  /** A job-style method: calls to it may queue while no worker runs. */
  readonly jobStyle: boolean;
}

/** What the directory knows of one method. */
export interface DirectoryEntry {
  readonly service: string;
  readonly jobStyle: boolean;
}

/** The side a service uses: records its announced methods (later records win). */
export interface DirectoryWriter {
  record(service: string, methods: readonly DirectoryMethod[]): Promise<void>;
}

/** How often a running instance records its methods again, keeping the entries' TTL fresh. */
export const directoryRefreshMs = 3_600_000;

/** The two levels a recorder logs at (a pino logger fits). */
export interface DirectoryRecorderLog {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/**
 * A service instance's side: records its methods at its first announcement,
 * again after each reconnect, then every {@link directoryRefreshMs}; one write
 * at a time. A failed write (Redis away) is logged once per outage and tried
 * again at the next announcement: the directory is a hint for callers, never
 * a reason for the service to stop.
 */
export class DirectoryRecorder {
  private recordedAt = 0;
  private writing: Promise<void> | undefined;
  private failing = false;

  constructor(
    private readonly writer: DirectoryWriter,
    private readonly service: string,
    private readonly methods: readonly DirectoryMethod[],
    private readonly log: DirectoryRecorderLog,
    private readonly refreshMs = directoryRefreshMs,
  ) {}

  /** The connection came back: whatever the directory held may be gone (a Redis flush is not announced), so record again. */
  reconnected(): void {
    this.recordedAt = 0;
  }

  /** Called at every announcement; writes only when due. */
  announced(): void {
    if (this.writing || (this.recordedAt > 0 && Date.now() - this.recordedAt < this.refreshMs)) return;
    this.writing = this.writer
      .record(this.service, this.methods)
      .then(
        () => {
          this.recordedAt = Date.now();
          this.failing = false;
        },
        (err: unknown) => {
          if (!this.failing) this.log.warn({ err }, 'methods not recorded in the directory; will retry');
          else this.log.debug({ err }, 'methods not recorded in the directory');
          this.failing = true;
        },
      )
      .finally(() => (this.writing = undefined));
  }

  /** Resolves when no write is running (a closing service waits for its last one). */
  async settled(): Promise<void> {
    await this.writing;
  }
}

/** What {@link recordAnnounced} needs of a registry. */
export interface AnnouncedServices {
  list(): readonly { readonly service: string; readonly methods: readonly { readonly name: string; readonly jobStyle?: boolean }[] }[];
  on(event: 'change', listener: () => void): unknown;
  off(event: 'change', listener: () => void): unknown;
}

/**
 * A registry's side (the broker's): records every service it hears announce,
 * so services that do not write the directory themselves (another language,
 * no Redis) are named too when all their instances are gone. Each distinct
 * method set is written once when first heard, then every `refreshMs` while
 * announced. Returns the owner's close.
 */
export function recordAnnounced(registry: AnnouncedServices, writer: DirectoryWriter, log: DirectoryRecorderLog, refreshMs = directoryRefreshMs): { close(): void } {
  // One recorder per method set announced now: a set no instance announces any more is forgotten (written
  // again if it comes back), so what announcers send cannot grow this map past what the registry holds.
  let recorders = new Map<string, DirectoryRecorder>();
  const onChange = (): void => {
    const current = new Map<string, DirectoryRecorder>();
    for (const instance of registry.list()) {
      const methods = instance.methods.map((m) => ({ name: m.name, jobStyle: m.jobStyle === true }));
      if (methods.length === 0) continue;
      const key = `${instance.service}\n${JSON.stringify(methods)}`;
      const recorder = current.get(key) ?? recorders.get(key) ?? new DirectoryRecorder(writer, instance.service, methods, log, refreshMs);
      current.set(key, recorder);
      recorder.announced();
    }
    recorders = current;
  };
  onChange();
  registry.on('change', onChange);
  // Announcements that change nothing emit no 'change': the refresh needs a clock of its own.
  const timer = setInterval(onChange, refreshMs);
  timer.unref();
  return {
    close: () => {
      clearInterval(timer);
      registry.off('change', onChange);
    },
  };
}
