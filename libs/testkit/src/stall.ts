/**
 * Keeps the event loop busy for `ms`, as a CPU-bound handler or a long garbage collection does:
 * timers and sockets wait until it returns.
 */
export function blockEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

/**
 * Starts `op` (a Redis command, say), blocks the event loop for `blockMs` before anything can read its
 * reply, then awaits it; `rounds` times. Resolves with each round's outcome: 'ok' or the error's message.
 * With a command timeout shorter than `blockMs`, a client whose timer fires before the poll phase reads
 * the reply that came meanwhile (ioredis's own `commandTimeout`) fails every round ('Command timed out').
 *
 * @example
 * expect(await outcomesAcrossStalls(() => redis.get('k'), { rounds: 6, blockMs: 400 })).toEqual(Array(6).fill('ok'));
 */
export async function outcomesAcrossStalls(op: (round: number) => Promise<unknown>, o: { readonly rounds: number; readonly blockMs: number }): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < o.rounds; i++) {
    // Each round starts in a turn of its own (the check phase), not inside the previous reply's socket read:
    // libuv reads a socket again after its callback returns, and would read this round's reply before the timers.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const sent = op(i).then(() => 'ok', (err: unknown) => (err instanceof Error ? err.message : String(err)));
    blockEventLoop(o.blockMs);
    outcomes.push(await sent);
  }
  return outcomes;
}
