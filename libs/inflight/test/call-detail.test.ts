// Call detail over the in-memory store (embedded mode): params (bounded), trace id and progress history.
import { decodeMeta, encodeMeta } from '../src/record-codec';
import { memoryInflightView } from '../src/memory';
import { connectMemory } from '../src/memory-handle';
import { MemoryInflightStore } from '../src/memory-store';
import { checkParamsTraceAndProgress, checkTruncatedParams } from './call-detail-check';

it("keeps a call's params, trace id and last progress reports, and tells them in call detail", async () => {
  const memory = new MemoryInflightStore();
  await checkParamsTraceAndProgress(connectMemory(memory), memoryInflightView(memory), 'c', 't1');
});

it('keeps params past the bound cut, with a marker, and nothing for a call without them', async () => {
  const memory = new MemoryInflightStore();
  await checkTruncatedParams(connectMemory(memory), memoryInflightView(memory), 'big', 'bare');
});

it('reads a meta written without trace id and params as before, and one with them back whole', () => {
  const base = { service: 's', method: 'm', deadline: 5, rid: '"a\\tb"' };
  expect(encodeMeta(base)).toBe('s\tm\t5\t"a\\tb"');
  expect(decodeMeta(encodeMeta(base))).toEqual(base);
  const full = { ...base, traceId: 'ab', params: '{"x":"\\t"}' };
  expect(decodeMeta(encodeMeta(full))).toEqual(full);
  expect(decodeMeta(encodeMeta({ ...base, params: '[1]' }))).toEqual({ ...base, params: '[1]' });
});
