// The docs name files, and readers follow those names: every relative markdown link in a tracked
// *.md file must reach a file (and its #anchor a heading there), and every backticked repository
// path (`libs/amqp/src/x.ts`) must exist. The docs stay short enough to read: none in docs/ past
// 500 lines, the README past 150 (split by reader instead).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');
const markdown = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', '*.md'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((f) => f !== '' && existsSync(path.join(root, f)));
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');

/** Text outside fenced code blocks: a shell example's `foo/bar.ts` is not a claim about this tree. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of prose(read(file)).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = (heading as string).toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of read(file).matchAll(/<a (?:id|name)="([^"]+)"/g)) out.add(id as string);
  return out;
}

/** Every relative link of a file that leads nowhere, as `file: target`. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  const dir = path.dirname(file);
  for (const [, target] of prose(read(file)).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const link = target as string;
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http:, https:, mailto:
    const [where, anchor] = link.split('#') as [string, string | undefined];
    const targetFile = where === '' ? file : path.normalize(path.join(dir, decodeURI(where)));
    if (!existsSync(path.join(root, targetFile))) broken.push(`${file}: ${link}`);
    else if (anchor !== undefined && anchor !== '' && targetFile.endsWith('.md') && !anchors(targetFile).has(anchor)) broken.push(`${file}: ${link} (no such heading)`);
  }
  return broken;
}

/** Top-level folders of the repository: a backticked path starting with one of them is a claim about this tree. */
const topLevel = ['libs', 'services', 'broker', 'scripts', 'bench', 'test', 'examples', 'docs', 'deploy'];

/** Whether git ignores the path: a build output (`bench/results/latest.json`) named as where a command writes. */
function ignored(file: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '-q', file], { cwd: root });
    return true;
  } catch {
    return false;
  }
}

/** Backticked repository paths of a file that do not exist, read from the root, the file's folder or its package. */
function missingPaths(file: string): string[] {
  const missing: string[] = [];
  const bases = [root, path.join(root, path.dirname(file)), path.join(root, file.split('/').slice(0, 2).join('/'))];
  for (const [, token] of prose(read(file)).matchAll(/`([^`\s]+)`/g)) {
    const candidate = (token as string).replace(/[#:].*$/, '');
    // A file (with an extension) or a folder (a trailing slash); `src/x.ts` only in a package's own README,
    // since docs/ use it for "any service's".
    const named = /(\.[a-z]{1,4}|\/)$/.test(candidate);
    const repoPath = topLevel.some((dir) => candidate.startsWith(`${dir}/`)) || (!file.startsWith('docs/') && /^(src|test)\//.test(candidate));
    // Placeholders and patterns (`services/<name>/src`, `libs/*/src`, `{a,b}`) name many files, not one.
    if (!named || !repoPath || /[<>*{}$]|\.\.\./.test(candidate)) continue;
    if (!bases.some((base) => existsSync(path.join(base, candidate))) && !ignored(candidate)) missing.push(`${file}: ${candidate}`);
  }
  return missing;
}

describe('the docs', () => {
  it('link only to files and headings that exist', () => {
    expect(markdown.flatMap(brokenLinks)).toEqual([]);
  });

  it('schemas point only at sections that exist (`docs/protocol.md, Cancellation` names a heading there)', () => {
    const schemas = readdirSync(path.join(root, 'docs', 'schemas')).filter((f) => f.endsWith('.json'));
    const headings = (file: string): Set<string> => new Set([...prose(read(file)).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)].map((m) => (m[1] as string).toLowerCase()));
    const stale = schemas.flatMap((schema) =>
      [...read(`docs/schemas/${schema}`).matchAll(/docs\/([a-z-]+\.md), \\?"?([^".\\]+(?:\([^)]*\))?)/g)]
        .filter(([, doc, section]) => !existsSync(path.join(root, 'docs', doc as string)) || !headings(`docs/${doc as string}`).has((section as string).trim().toLowerCase()))
        .map(([whole]) => `${schema}: ${whole}`));
    expect(stale).toEqual([]);
  });

  it('name only repository paths that exist', () => {
    expect(markdown.flatMap(missingPaths)).toEqual([]);
  });

  it('show examples/greeter.ts in the README as it is (the file is type-checked and linted, the snippet is not)', () => {
    expect(read('README.md')).toContain(`\`\`\`ts\n${read('examples/greeter.ts')}\`\`\``);
  });

  it('stay short: docs/*.md at most 500 lines, README.md at most 150', () => {
    const lines = (file: string): number => read(file).split('\n').length - 1;
    const tooLong = markdown
      .filter((f) => f === 'README.md' || /^docs\/[^/]+\.md$/.test(f))
      .map((f) => ({ file: f, lines: lines(f), limit: f === 'README.md' ? 150 : 500 }))
      .filter(({ lines: n, limit }) => n > limit);
    expect(tooLong).toEqual([]);
  });
});
