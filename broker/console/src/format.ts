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

/** Call ids are `<client>.<22 random characters>`: the tail is what tells calls apart at a glance. */
export function shortId(id: string): string {
  return id.length <= 18 ? id : `…${id.slice(-16)}`;
}
