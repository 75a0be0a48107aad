import { outcomeOf } from '../src';

describe('outcomeOf', () => {
  it('replies with the answer text and acks', () => {
    expect(outcomeOf({ kind: 'answer', text: '{"jsonrpc":"2.0","result":1,"id":1}', response: { jsonrpc: '2.0', result: 1, id: 1 } }))
      .toEqual({ reply: '{"jsonrpc":"2.0","result":1,"id":1}', settle: { action: 'ack' }, source: 'run' });
  });

  it('dead-letters with the reason when the answer gives the request up', () => {
    const out = outcomeOf({ kind: 'answer', text: 'x', response: undefined, deadLetter: { reason: 'retries_exhausted', code: -32004, attempts: 3 } });
    expect(out.settle).toEqual({ action: 'dead-letter', reason: 'retries_exhausted', code: -32004, attempts: 3 });
    expect(out.reply).toBe('x');
  });

  it('sends nothing for an answer without text (a batch of notifications)', () => {
    expect(outcomeOf({ kind: 'answer', text: undefined, response: undefined })).toEqual({ reply: undefined, settle: { action: 'ack' }, source: 'run' });
  });

  it('settles a retry with its delay and next attempt, without a reply', () => {
    expect(outcomeOf({ kind: 'retry', delayMs: 500, nextAttempt: 2, nextTryAt: 1000 })).toEqual({ reply: undefined, settle: { action: 'retry', delayMs: 500, nextAttempt: 2 }, source: 'run' });
  });

  it('requeues what was shut down mid-run', () => {
    expect(outcomeOf({ kind: 'requeue' })).toEqual({ reply: undefined, settle: { action: 'requeue' }, source: 'run' });
  });

  it('never waits for a store', () => {
    expect(outcomeOf({ kind: 'requeue' }).stored).toBeUndefined();
  });
});
