export function duration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Time until (positive) or since (negative) an instant, short. */
export function relative(ms: number): string {
  const a = Math.abs(ms);
  const text = a < 1000 ? `${Math.round(a)} ms` : a < 60_000 ? `${Math.round(a / 1000)} s` : a < 3_600_000 ? `${Math.round(a / 60_000)} min` : `${Math.round(a / 3_600_000)} h`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

/** The time of day; with the date too when it is not today. */
export function clock(at: number | undefined): string {
  if (at === undefined || at <= 0) return '–';
  const d = new Date(at);
  const time = d.toLocaleTimeString([], { hour12: false });
  return d.toDateString() === new Date().toDateString() ? time : `${d.toLocaleDateString()} ${time}`;
}

export function bytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

/**
 * Call ids are `<client>.<22 random characters>`: the tail is what tells calls apart at a glance. A
 * replayed dead letter's id is `replay.<hex>`: its kind is kept in front, and the hex's tail after it.
 */
export function shortId(id: string): string {
  if (id.length <= 18) return id;
  if (id.startsWith('replay.')) return `replay.…${id.slice(-8)}`;
  return `…${id.slice(-16)}`;
}

/** An SVG path through the points, broken (a new `M`) wherever a point is missing, never bridging the gap. */
export function linePath(points: readonly (readonly [number, number] | undefined)[]): string {
  let out = '';
  let drawing = false;
  for (const p of points) {
    if (p === undefined) {
      drawing = false;
      continue;
    }
    out += `${out === '' ? '' : ' '}${drawing ? 'L' : 'M'}${p[0].toFixed(1)},${p[1].toFixed(1)}`;
    drawing = true;
  }
  return out;
}

/** Date and time, always both (history rows span days). */
export function dateTime(at: number | undefined): string {
  if (at === undefined || at <= 0) return '–';
  const d = new Date(at);
  return `${d.toLocaleDateString([], { year: 'numeric', month: '2-digit', day: '2-digit' })} ${d.toLocaleTimeString([], { hour12: false })}`;
}

/** A `datetime-local` input's value for an instant (local time), and back; '' / undefined when unset. */
export function toLocalInput(at: number | undefined): string {
  if (at === undefined || !Number.isFinite(at)) return '';
  const d = new Date(at - new Date(at).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/**
 * A time as a link gives it (`since=`, `until=`): ms since the epoch as the form writes it, or a
 * hand-typed date (`2026-12-04`, local midnight) or date-time (`2026-12-04T09:30`, local; with `Z`
 * or an offset, as written). Undefined when it reads as none of these.
 */
export function parseTimeParam(value: string): number | undefined {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number.isSafeInteger(Number(text)) ? Number(text) : undefined;
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) return undefined;
  const at = new Date(text.length === 10 ? `${text}T00:00` : text.replace(' ', 'T')).getTime();
  return Number.isFinite(at) ? at : undefined;
}

export function fromLocalInput(value: string): number | undefined {
  if (value === '') return undefined;
  const at = new Date(value).getTime();
  return Number.isFinite(at) ? at : undefined;
}
