/** What a dependency reports to GET /readyz. */
export interface ProbeResult {
  readonly ok: boolean;
  /** Short state, e.g. 'ready', 'connecting', 'end'. */
  readonly state?: string;
}

/**
 * A dependency GET /readyz reports on besides RabbitMQ, e.g. the Redis of the
 * in-flight store. Only `required` probes make the gateway unready: Redis is
 * an aid to calls, not a gate on them, so by default it is only reported.
 *
 * @example
 * const redis: ReadinessProbe = { name: 'redis', check: async () => ({ ok: store.status === 'ready', state: store.status }) };
 */
export interface ReadinessProbe {
  readonly name: string;
  /** Unready while this probe fails. @default false */
  readonly required?: boolean;
  /** May reject; a rejection or a check slower than 1 s counts as not ok. */
  check(): Promise<ProbeResult>;
}

export interface ProbeReport extends ProbeResult {
  readonly name: string;
  readonly required: boolean;
}

/** Runs every probe concurrently, each bounded by `timeoutMs`; never rejects. */
export async function runProbes(probes: readonly ReadinessProbe[], timeoutMs = 1000): Promise<ProbeReport[]> {
  return Promise.all(probes.map(async (p): Promise<ProbeReport> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<ProbeResult>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, state: 'timeout' }), timeoutMs);
    });
    try {
      const result = await Promise.race([p.check(), timeout]);
      return { name: p.name, required: p.required ?? false, ok: result.ok, ...(result.state === undefined ? {} : { state: result.state }) };
    } catch {
      return { name: p.name, required: p.required ?? false, ok: false, state: 'error' };
    } finally {
      clearTimeout(timer);
    }
  }));
}
