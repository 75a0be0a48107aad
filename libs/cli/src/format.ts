// Output helpers: colours (only on a TTY, NO_COLOR respected), aligned tables,
// JSON with highlighting, durations. Nothing here writes; callers pass text on.

export interface Colors {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

/** Colours when writing to a terminal, unless NO_COLOR is set; FORCE_COLOR (not 0) forces them. */
export function wantColor(isTTY: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  if (env['FORCE_COLOR'] !== undefined && env['FORCE_COLOR'] !== '') return env['FORCE_COLOR'] !== '0';
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  return isTTY && env['TERM'] !== 'dumb';
}

export function colors(enabled: boolean): Colors {
  const wrap = (open: number, close: number) => (text: string): string => (enabled ? `\u001b[${open}m${text}\u001b[${close}m` : text);
  return { enabled, bold: wrap(1, 22), dim: wrap(2, 22), red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39), cyan: wrap(36, 39), magenta: wrap(35, 39) };
}

// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[[0-9;]*m/g;
const visibleLength = (text: string): number => text.replace(ansi, '').length;

/** An aligned text table; `right` names the columns to right-align (numbers). */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], c: Colors, right: ReadonlySet<number> = new Set()): string {
  const widths = headers.map((h, i) => Math.max(visibleLength(h), ...rows.map((r) => visibleLength(r[i] ?? ''))));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => {
        const pad = ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(cell)));
        return right.has(i) ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd();
  return [c.bold(line(headers)), ...rows.map(line)].join('\n');
}

/** Pretty JSON, with keys, strings and numbers coloured when colours are on. */
export function prettyJson(value: unknown, c: Colors): string {
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  if (!c.enabled) return text;
  return text.replace(/("(?:\\.|[^"\\])*")(\s*:)?|\b(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\b|\b(true|false|null)\b/g, (match, str: string | undefined, colon: string | undefined, num: string | undefined, lit: string | undefined) => {
    if (str !== undefined) return colon ? c.cyan(str) + colon : c.green(str);
    if (num !== undefined) return c.yellow(num);
    if (lit !== undefined) return c.magenta(lit);
    return match;
  });
}

/** 1234 → "1.2s", 90 → "90ms", 125000 → "2m05s". */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

