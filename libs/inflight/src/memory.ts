import { InflightView } from './view';
import { StoreCallTracker } from './call-tracker';
import { connectMemory } from './memory-handle';
import type { MemoryInflightStore } from './memory-store';
import type { TrackerOptions, ViewOptions } from './options';

/**
 * A tracker over an in-memory store (embedded mode): the same tracker, the same decisions, only
 * the store differs. `options.redis` and `commandTimeoutMs` are not used.
 *
 * @example
 * const memory = new MemoryInflightStore();
 * await startService({ connection, name: 'calculator', methods, tracker: createMemoryTracker(memory) });
 */
export function createMemoryTracker(memory: MemoryInflightStore, options: Omit<TrackerOptions, 'redis'> = {}): StoreCallTracker {
  return new StoreCallTracker(options, connectMemory(memory));
}

/** The cluster view over an in-memory store: what the broker and the jobs service read in embedded mode. */
export function memoryInflightView(memory: MemoryInflightStore, options: Omit<ViewOptions, 'redis'> = {}): InflightView {
  return new InflightView(options, connectMemory(memory));
}
