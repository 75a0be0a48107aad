// `npm run pack` derives what it packs from the workspaces (scripts/packages.ts), so no package can
// be left out of the tarballs, and points each tarball's @warren/* dependencies at the others.
import path from 'node:path';
import { parsePackArgs } from '../../scripts/pack';
import { pointAtTarballs, publishablePackages, tarballName, warrenDependencies } from '../../scripts/packages';

const root = path.resolve(__dirname, '../..');

it('packs every workspace package not marked private, each after its @warren dependencies', () => {
  const packages = publishablePackages(root);
  const names = packages.map((p) => p.manifest.name);
  expect([...names].sort()).toEqual(['@warren/amqp', '@warren/amqp-transport', '@warren/broker', '@warren/calls', '@warren/cli', '@warren/config', '@warren/eventlog', '@warren/inflight', '@warren/jsonrpc', '@warren/logger', '@warren/redis', '@warren/schedules', '@warren/tracing-node']);
  for (const [i, p] of packages.entries()) {
    for (const dep of warrenDependencies(p.manifest)) expect({ package: p.manifest.name, dep, before: names.indexOf(dep) < i && names.includes(dep) }).toEqual({ package: p.manifest.name, dep, before: true });
  }
});

it('points @warren dependencies at the tarballs and leaves the others alone', () => {
  const m = { name: '@warren/amqp', version: '0.1.0', dependencies: { '@warren/jsonrpc': '^0.1.0', ajv: '^8.20.0' }, devDependencies: { '@warren/testkit': '*' } };
  const out = pointAtTarballs(m, (name) => `/out/${tarballName({ name, version: '0.1.0' })}`);
  expect(out.dependencies).toEqual({ '@warren/jsonrpc': 'file:/out/warren-jsonrpc-0.1.0.tgz', ajv: '^8.20.0' });
  expect(out['devDependencies']).toEqual({ '@warren/testkit': '*' });
});

it('reads --out relative to where npm was run from, and refuses anything else', () => {
  expect(parsePackArgs(['--out', '../pk'], '/home/ada/app')).toEqual({ out: '/home/ada/pk', build: true });
  expect(parsePackArgs(['--no-build'], '/a')).toEqual({ out: '/a/warren-packages', build: false });
  expect(() => parsePackArgs(['--outdir', 'x'], '/a')).toThrow(RangeError);
});
