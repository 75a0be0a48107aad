import { RawNumberId } from './raw-id';
import type { Id } from './types';

// An id stored as text (a tracker's record, a log line) and read back, a raw number id exact: beside
// raw-id.ts rather than in it, since `Id` (types.ts) names RawNumberId and raw-id.ts must not name `Id` back.

/** The JSON text of an id, exact for a raw number id (for storing an id as text). */
export function idText(id: Id): string {
  return id instanceof RawNumberId ? id.text : JSON.stringify(id);
}

/** Reads an id back from {@link idText}; null when absent or not an id. Never throws. */
export function parseIdText(text: string | undefined): Id {
  if (text === undefined) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'string') return value;
    if (typeof value !== 'number') return null;
    const trimmed = text.trim();
    return trimmed === String(value) ? value : new RawNumberId(trimmed);
  } catch {
    return null;
  }
}
