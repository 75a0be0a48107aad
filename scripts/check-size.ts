// `npm run lint:size`: fails when a tracked source file passes 400 lines, the house's
// limit (a file that long holds more than one idea; split it by topic). Files are listed by
// `git ls-files`, so what git ignores (dist/, node_modules/) is never counted.
// Exempt: examples/generated/, written by `warren gen` and checked against it, never by hand.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const maxLines = 400;
const roots = ['libs/', 'services/', 'broker/', 'scripts/', 'bench/', 'test/', 'examples/'];
const exempt = ['examples/generated/'];

const files = execFileSync('git', ['ls-files', '-z', '--', ...roots], { encoding: 'utf8' })
  .split('\0')
  .filter((f) => /\.(ts|tsx|mjs)$/.test(f) && !exempt.some((dir) => f.startsWith(dir)));

const over = files
  .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
  .filter(({ lines }) => lines > maxLines);

for (const { file, lines } of over) process.stderr.write(`${file}: ${lines} lines (limit ${maxLines})\n`);
if (over.length > 0) process.exitCode = 1;
