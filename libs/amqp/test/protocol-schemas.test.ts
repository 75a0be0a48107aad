// docs/schemas/*.json are the schemas the code enforces, written out; and every
// example in the protocol's docs (docs/protocol*.md) marked `<!-- schema: file -->` fits its schema.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { jsonSchemaDraft, protocolSchemaFiles } from '../src/wire/protocol-schemas';

const root = path.join(__dirname, '..', '..', '..');
const schemaDir = path.join(root, 'docs', 'schemas');
const onDisk = (file: string): unknown => JSON.parse(readFileSync(path.join(schemaDir, file), 'utf8'));

describe('docs/schemas', () => {
  it('holds exactly the schemas the code enforces (regenerate with `npx tsx scripts/write-schemas.ts`)', () => {
    // Other schema files (written by hand) may sit next to these; the generated ones must match.
    for (const [file, schema] of Object.entries(protocolSchemaFiles)) expect(onDisk(file)).toEqual(schema);
  });

  it('compiles every draft-07 schema file in ajv strict mode', () => {
    const ajv = new Ajv({ strict: true });
    const files = readdirSync(schemaDir).filter((f) => f.endsWith('.schema.json') && (onDisk(f) as { $schema?: string }).$schema === jsonSchemaDraft);
    expect(files).toEqual(expect.arrayContaining(Object.keys(protocolSchemaFiles)));
    for (const file of files) expect(() => ajv.compile(onDisk(file) as object)).not.toThrow();
  });

  it('has every marked example in docs/protocol*.md fit its schema', () => {
    // The contract is three files (protocol.md, protocol-jobs.md, protocol-discovery.md): read as one.
    const docs = readdirSync(path.join(root, 'docs')).filter((f) => /^protocol.*\.md$/.test(f));
    const doc = docs.map((f) => readFileSync(path.join(root, 'docs', f), 'utf8')).join('\n');
    const examples = [...doc.matchAll(/<!-- schema: ([\w.-]+) -->\s*```json\n([\s\S]*?)```/g)];
    expect(examples.length).toBeGreaterThanOrEqual(2);
    const ajv = new Ajv({ strict: true, allErrors: true });
    for (const [, file, body] of examples) {
      const validate = ajv.getSchema((onDisk(file as string) as { $id: string }).$id) ?? ajv.compile(onDisk(file as string) as object);
      const value: unknown = JSON.parse(body as string);
      expect({ file, errors: validate(value) ? null : validate.errors }).toEqual({ file, errors: null });
    }
  });
});
