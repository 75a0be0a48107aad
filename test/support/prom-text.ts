// Reads Prometheus text exposition for tests: every sample with its name and
// labels, and a sum over the samples whose labels include the ones asked for
// (label order in the text does not matter).

export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export function parseProm(text: string): PromSample[] {
  const samples: PromSample[] = [];
  for (const line of text.split('\n')) {
    if (line.length === 0 || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m?.[1] || m[3] === undefined) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) if (l[1] !== undefined && l[2] !== undefined) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of `name`'s samples whose labels include `labels`; undefined when there is none. */
export function promSum(samples: readonly PromSample[], name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hits.length === 0 ? undefined : hits.reduce((a, s) => a + s.value, 0);
}

/** Fetches and parses a /metrics endpoint. */
export async function scrape(url: string): Promise<PromSample[]> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
  return parseProm(await res.text());
}
