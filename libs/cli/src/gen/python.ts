// The Python client `warren gen` writes: TypedDicts and aliases for every params and result (a
// TypedDict rather than a dataclass because the wire is JSON: what json.loads gives IS the
// TypedDict, with no conversion code that could drift from the schema), a thin pika client
// (python-runtime.ts, written from docs/protocol.md), and `Api` / `Notifications` classes with one
// typed method each. Deterministic like the TypeScript one.
import type { ApiMethod, ApiModel, ApiNotification } from './api-model';
import { Identifiers, pascal, pythonReserved, snake } from './identifiers';
import { pythonRuntime } from './python-runtime';
import type { PropertyModel, TypeModel } from './schema-types';

/** Hoists the TypedDicts a type needs (Python cannot write an object type inline) and prints types. */
class PythonTypes {
  readonly defs: string[] = [];
  private readonly byShape = new Map<string, string>();

  constructor(private readonly ids: Identifiers) {}

  /** The annotation for `t`; `hint` names any TypedDict it needs. */
  type(t: TypeModel, hint: string): string {
    switch (t.kind) {
      case 'unknown':
        return 'Any';
      case 'never':
        return 'NoReturn';
      case 'null':
        return 'None';
      case 'boolean':
        return 'bool';
      case 'number':
        return t.integer ? 'int' : 'float';
      case 'string':
        return 'str';
      case 'literal':
        return `Literal[${typeof t.value === 'boolean' ? (t.value ? 'True' : 'False') : JSON.stringify(t.value)}]`;
      case 'array':
        return `List[${this.type(t.items, `${hint}Item`)}]`;
      case 'tuple': {
        // Python's Tuple has no optional places: one Tuple per length allowed; a rest makes it a List.
        if (t.rest !== undefined) return `List[${this.type({ kind: 'union', of: [...t.items, t.rest] }, `${hint}Item`)}]`;
        const tuples = fixedTuples(t).map((fixed) => (fixed.length === 0 ? 'Tuple[()]' : `Tuple[${fixed.map((item, i) => this.type(item, `${hint}${i}`)).join(', ')}]`));
        return tuples.length === 1 ? (tuples[0] as string) : `Union[${tuples.join(', ')}]`;
      }
      case 'object':
        return this.object(t.properties, t.extra, hint);
      case 'union': {
        let objects = 0;
        const members = t.of.flatMap((m): TypeModel[] => (m.kind === 'tuple' && m.rest === undefined ? fixedTuples(m).map((items) => ({ kind: 'tuple', items, required: items.length, rest: undefined })) : [m])).map((m) => this.type(m, m.kind === 'object' && m.properties.length > 0 ? `${hint}Object${++objects === 1 ? '' : objects}` : hint));
        return `Union[${[...new Set(members)].join(', ')}]`;
      }
      case 'intersection': {
        // A TypedDict can hold the properties of several object types; anything else has no Python spelling.
        const parts = t.of;
        if (!parts.every((p): p is Extract<TypeModel, { kind: 'object' }> => p.kind === 'object')) return 'Any';
        const merged = new Map<string, PropertyModel>();
        for (const p of parts.flatMap((o) => o.properties)) {
          const seen = merged.get(p.name);
          merged.set(p.name, seen === undefined ? p : { ...seen, required: seen.required || p.required, type: { kind: 'intersection', of: [seen.type, p.type] } });
        }
        return this.object([...merged.values()], parts.every((p) => p.extra !== undefined) ? { kind: 'unknown' } : undefined, hint);
      }
      default: {
        const never: never = t;
        return never;
      }
    }
  }

  /** Defines `name` (taken already): an object type as the TypedDict `name`, anything else as an alias. */
  define(t: TypeModel, name: string): void {
    const annotation = t.kind === 'object' && t.properties.length > 0 ? this.object(t.properties, t.extra, name, name) : this.type(t, name);
    if (annotation !== name) this.defs.push(`${name} = ${annotation}`);
  }

  private object(properties: readonly PropertyModel[], extra: TypeModel | undefined, hint: string, named?: string): string {
    if (properties.length === 0) return `Dict[str, ${extra === undefined ? 'Any' : this.type(extra, `${hint}Value`)}]`;
    const fields = properties.map((p) => {
      const annotation = this.type(p.type, `${hint}${pascal(p.name) || 'Field'}`);
      return `${JSON.stringify(p.name)}: ${p.required ? annotation : `NotRequired[${annotation}]`}`;
    });
    const shape = fields.join(', ');
    const known = this.byShape.get(shape);
    if (known !== undefined) return known;
    const name = named ?? this.ids.take(hint, 'Object');
    this.byShape.set(shape, name);
    // The functional form: property names need not be Python identifiers.
    this.defs.push('', `${name} = TypedDict(${JSON.stringify(name)}, {`, ...fields.map((f) => `    ${f},`), '})');
    return name;
  }
}

/** The item lists a closed tuple allows: one per length from its required places to all of them. */
function fixedTuples(t: Extract<TypeModel, { kind: 'tuple' }>): (readonly TypeModel[])[] {
  return Array.from({ length: t.items.length - t.required + 1 }, (_, k) => t.items.slice(0, t.required + k));
}

const docstring = (text: string, indent: string): string => `${indent}"""${text.replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"').replace(/\s*\n\s*/g, ' ')}"""`;

/**
 * The whole module as text.
 *
 * @example writeFileSync('warren_api.py', pythonClient(apiModel(doc), 'warren gen --python warren_api.py'))
 */
export function pythonClient(model: ApiModel, command: string): string {
  const ids = new Identifiers(pythonReserved);
  const types = new PythonTypes(ids);
  const methodIds = new Identifiers(pythonReserved);
  const methods = model.methods.map((m) => {
    const stem = pascal(m.name) || 'Method';
    const names = { P: ids.take(`${stem}Params`, 'Method'), R: ids.take(`${stem}Result`, 'Method'), E: ids.take(`${stem}ErrorCode`, 'Method') };
    types.define(m.params, names.P);
    types.define(m.result, names.R);
    types.defs.push(`${names.E} = Literal[${m.errors.map((e) => e.code).join(', ') || 'None'}]`);
    return { m, id: methodIds.take(snake(m.name), 'call'), ...names };
  });
  const noteIds = new Identifiers(pythonReserved);
  const notes = model.notifications.map((n) => {
    const P = ids.take(`${pascal(n.name) || 'Notification'}Params`, 'Notification');
    types.define(n.params, P);
    return { n, id: noteIds.take(snake(n.name), 'notify'), P };
  });
  return [
    `"""Generated by \`${command}\` from the OpenRPC document ${JSON.stringify(model.title)} ${model.version}.`,
    '',
    'Do not edit: generate it again (docs/cli.md, "warren gen"). Needs pika (Debian: python3-pika).',
    '',
    '    with WarrenClient("amqp://guest:guest@127.0.0.1:5672") as client:',
    '        api = Api(client)',
    '"""',
    'import json',
    'import secrets',
    'import time',
    'import uuid',
    'from typing import Any, Dict, List, Literal, NoReturn, Optional, Tuple, TypedDict, Union',
    '',
    'try:',
    '    from typing import NotRequired',
    'except ImportError:  # Python < 3.11',
    '    from typing_extensions import NotRequired',
    '',
    'import pika',
    ...types.defs,
    '',
    '',
    pythonRuntime.trimEnd(),
    '',
    '',
    'class Api:',
    '    """Every method, typed: `Api(client).add([4, 5])`; an error answer raises WarrenError."""',
    '',
    '    def __init__(self, client: WarrenClient) -> None:',
    '        self._client = client',
    ...methods.flatMap(({ m, id, P, R }) => methodLines(m, id, P, R)),
    '',
    '',
    'class Notifications:',
    '    """Every notification, typed: `Notifications(client).notify_sum([1, 2])`."""',
    '',
    '    def __init__(self, client: WarrenClient) -> None:',
    '        self._client = client',
    ...notes.flatMap(({ n, id, P }) => notificationLines(n, id, P)),
  ].join('\n') + '\n';
}

function methodLines(m: ApiMethod, id: string, P: string, R: string): string[] {
  const params = m.paramsOptional ? `params: Optional[${P}] = None` : `params: ${P}`;
  const errors = m.errors.map((e) => `${e.code} ${e.message}`).join(', ');
  return [
    '',
    `    def ${id}(self, ${params}, timeout: Optional[float] = None) -> ${R}:`,
    docstring(`${m.description ?? m.name}${m.description === undefined ? '' : ` (${m.name})`} Errors: ${errors || 'none documented'}.`, '        '),
    `        return self._client.call(${JSON.stringify(m.name)}, params, timeout=timeout, persistent=${m.persistent ? 'True' : 'False'})`,
  ];
}

function notificationLines(n: ApiNotification, id: string, params: string): string[] {
  return [
    '',
    `    def ${id}(self, params: ${n.paramsOptional ? `Optional[${params}] = None` : params}) -> None:`,
    docstring(`${n.description ?? n.name}${n.services.length === 0 ? '' : ` Subscribed: ${n.services.join(', ')}.`}`, '        '),
    `        self._client.notify(${JSON.stringify(n.name)}, params)`,
  ];
}
