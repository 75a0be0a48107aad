// The commands docs/running.md gives for using the packages from another project, read from the
// page itself (the sh block after the marker comment), so the pack test runs what the page says
// and the two cannot drift apart.
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A run of lines to run in one shell, one after another, or one line to run in the background. */
export type DocStep = { readonly kind: 'shell'; readonly lines: readonly string[] } | { readonly kind: 'background'; readonly line: string };

const marker = '<!-- test/pack/pack.test.ts runs the next block';

/** The block's lines, split at each line ending in `&` (a process left running). */
export function docSteps(root: string): DocStep[] {
  const text = readFileSync(path.join(root, 'docs/running.md'), 'utf8');
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`docs/running.md has no ${marker} ...-->`);
  const block = /```sh\n([\s\S]*?)\n```/.exec(text.slice(at));
  if (block?.[1] === undefined) throw new Error('docs/running.md: no sh block after the pack-test marker');
  const steps: DocStep[] = [];
  let lines: string[] = [];
  for (const line of block[1].split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))) {
    if (line.endsWith('&')) {
      if (lines.length > 0) steps.push({ kind: 'shell', lines });
      lines = [];
      steps.push({ kind: 'background', line: line.slice(0, -1).trim() });
    } else lines.push(line);
  }
  if (lines.length > 0) steps.push({ kind: 'shell', lines });
  return steps;
}
