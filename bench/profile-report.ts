/**
 * Where the time of each profiled bench process went:
 *
 *   BENCH_PROF=/tmp/prof npm run bench -- --targets warren+tracking --concurrency 64 --rounds 1 --calls 20000
 *   npm run bench:profile -- /tmp/prof [--calls N] [--top 25]
 *
 * Prints each profile's busy time by group (workspace package, npm package, Node internals, GC) and its
 * top functions by self time; with `--calls` (the calls the process served or made, warm-up included)
 * every figure is also given per call, in µs.
 */
import { basename, dirname } from 'node:path';
import { profilesIn, summarizeProfile } from './profile';

function main(): void {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith('--'));
  const flag = (name: string): number | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : undefined;
  };
  if (!dir) throw new Error('usage: profile-report <dir> [--calls N] [--top N]');
  const calls = flag('--calls');
  const top = flag('--top') ?? 25;
  const cell = (us: number): string => (calls ? `${(us / calls).toFixed(2).padStart(8)} µs/call` : `${(us / 1000).toFixed(1).padStart(9)} ms`);
  for (const file of profilesIn(dir)) {
    const s = summarizeProfile(file);
    console.log(`\n## ${basename(dirname(file))}: busy ${cell(s.busyUs)}`);
    console.log('by purpose:');
    for (const [purpose, us] of s.byPurpose) console.log(`  ${cell(us)}  ${(100 * us / s.busyUs).toFixed(1).padStart(5)} %  ${purpose}`);
    console.log('by group:');
    for (const [group, us] of s.byGroup.slice(0, 20)) console.log(`  ${cell(us)}  ${(100 * us / s.busyUs).toFixed(1).padStart(5)} %  ${group}`);
    console.log('top functions (self):');
    for (const [name, us] of s.byFunction.slice(0, top)) console.log(`  ${cell(us)}  ${(100 * us / s.busyUs).toFixed(1).padStart(5)} %  ${name}`);
    console.log('workspace functions (inclusive: with their callees):');
    for (const [name, us] of s.inclusive.slice(0, top)) console.log(`  ${cell(us)}  ${(100 * us / s.busyUs).toFixed(1).padStart(5)} %  ${name}`);
  }
}

main();
