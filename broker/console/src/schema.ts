// Params forms from JSON Schemas: which fields a method's params schema asks
// for, and the params a filled-in form makes. Pure functions (unit-tested);
// the view renders them. Anything the form cannot express falls back to a
// JSON editor rather than guessing.

export type Schema = boolean | { readonly [key: string]: unknown };

export type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'enum' | 'json';

export interface Field {
  /** Property name (by name) or position label (by position). */
  readonly name: string;
  readonly kind: FieldKind;
  readonly required: boolean;
  readonly description?: string;
  readonly options?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
  /** The default, as the text put in the input. */
  readonly initial: string;
}

export type FormModel =
  | { readonly shape: 'none' }
  | { readonly shape: 'by-name'; readonly fields: readonly Field[] }
  | { readonly shape: 'by-position'; readonly fields: readonly Field[] }
  /** The schema does not fit a form (variadic arrays, combinations): edit the JSON. */
  | { readonly shape: 'json'; readonly example: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The form for a params schema (undefined: the method takes any params). */
export function formFor(schema: Schema | undefined): FormModel {
  if (schema === undefined || schema === true) return { shape: 'json', example: '' };
  if (!isObject(schema)) return { shape: 'none' };
  // Several ways to pass params (by position or by name): a form for the by-name one, which labels its fields.
  const alternatives = Array.isArray(schema['oneOf']) ? schema['oneOf'] : Array.isArray(schema['anyOf']) ? schema['anyOf'] : undefined;
  if (alternatives) {
    const models = alternatives.map((s) => formFor(s as Schema));
    return models.find((m) => m.shape === 'by-name') ?? models.find((m) => m.shape === 'by-position') ?? models[0] ?? { shape: 'json', example: '' };
  }
  if (schema['type'] === 'object' || (schema['type'] === undefined && isObject(schema['properties']))) {
    const properties = isObject(schema['properties']) ? schema['properties'] : {};
    const required = Array.isArray(schema['required']) ? (schema['required'] as unknown[]) : [];
    const names = Object.keys(properties);
    if (names.length === 0) return schema['additionalProperties'] === false ? { shape: 'none' } : { shape: 'json', example: '{}' };
    return { shape: 'by-name', fields: names.map((name) => field(name, properties[name] as Schema, required.includes(name))) };
  }
  if (schema['type'] === 'array') {
    if (schema['maxItems'] === 0) return { shape: 'none' };
    const tuple = Array.isArray(schema['prefixItems']) ? schema['prefixItems'] : Array.isArray(schema['items']) ? schema['items'] : undefined;
    const min = typeof schema['minItems'] === 'number' ? schema['minItems'] : undefined;
    const max = typeof schema['maxItems'] === 'number' ? schema['maxItems'] : undefined;
    const item = schema['items'];
    const positions = tuple ?? (min !== undefined && min === max && min <= 16 && isObject(item) ? Array.from({ length: min }, () => item) : undefined);
    if (positions) return { shape: 'by-position', fields: positions.map((s, i) => field(positionName(s, i), s as Schema, i < (min ?? positions.length))) };
    return { shape: 'json', example: '[]' };
  }
  return { shape: 'json', example: '' };
}

function positionName(s: unknown, i: number): string {
  return isObject(s) && typeof s['title'] === 'string' && s['title'] !== '' ? s['title'] : `#${i + 1}`;
}

function field(name: string, s: Schema, required: boolean): Field {
  const o = isObject(s) ? s : {};
  const base = {
    name,
    required,
    ...(typeof o['description'] === 'string' ? { description: o['description'] } : {}),
    ...(typeof o['minimum'] === 'number' ? { minimum: o['minimum'] } : {}),
    ...(typeof o['maximum'] === 'number' ? { maximum: o['maximum'] } : {}),
  };
  const initial = o['default'] === undefined ? '' : typeof o['default'] === 'string' ? o['default'] : JSON.stringify(o['default']);
  if (Array.isArray(o['enum'])) return { ...base, kind: 'enum', options: o['enum'], initial: o['default'] === undefined ? '' : JSON.stringify(o['default']) };
  switch (o['type']) {
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
      return { ...base, kind: o['type'], initial: o['type'] === 'boolean' ? String(o['default'] === true) : initial };
    default:
      return { ...base, kind: 'json', initial };
  }
}

export type ParamsResult = { readonly ok: true; readonly params: unknown } | { readonly ok: false; readonly field?: string; readonly message: string };

/** The params a filled-in form makes; empty optional fields are left out. */
export function paramsFrom(model: FormModel, values: Readonly<Record<string, string>>, jsonText = ''): ParamsResult {
  switch (model.shape) {
    case 'none':
      return { ok: true, params: undefined };
    case 'json': {
      if (jsonText.trim() === '') return { ok: true, params: undefined };
      try {
        return { ok: true, params: JSON.parse(jsonText) as unknown };
      } catch {
        return { ok: false, message: 'params are not valid JSON' };
      }
    }
    case 'by-name':
    case 'by-position': {
      const out: [string, unknown][] = [];
      for (const f of model.fields) {
        const text = values[f.name] ?? f.initial;
        if (text === '' && f.kind !== 'string') {
          if (f.required) return { ok: false, field: f.name, message: `${f.name} is required` };
          continue;
        }
        if (text === '' && !f.required) continue;
        const value = parseField(f, text);
        if (!value.ok) return value;
        out.push([f.name, value.params]);
      }
      if (model.shape === 'by-name') return { ok: true, params: Object.fromEntries(out) };
      return { ok: true, params: out.map(([, v]) => v) };
    }
  }
}

function parseField(f: Field, text: string): ParamsResult {
  switch (f.kind) {
    case 'string':
      return { ok: true, params: text };
    case 'boolean':
      return { ok: true, params: text === 'true' };
    case 'integer':
    case 'number': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n)) return { ok: false, field: f.name, message: `${f.name} must be a number` };
      if (f.kind === 'integer' && !Number.isInteger(n)) return { ok: false, field: f.name, message: `${f.name} must be a whole number` };
      return { ok: true, params: n };
    }
    case 'enum':
    case 'json':
      try {
        return { ok: true, params: JSON.parse(text) as unknown };
      } catch {
        // A bare word typed into a free field is meant as a string.
        if (f.kind === 'json') return { ok: true, params: text };
        return { ok: false, field: f.name, message: `${f.name}: pick one of the listed values` };
      }
  }
}

/** A -32602's `data` (the validator's `{path, keyword, message}` list) mapped onto the form's fields. */
export interface ParamsProblems {
  /** Field name → what is wrong with it. */
  readonly fields: Readonly<Record<string, string>>;
  /** What belongs to no field (the params as a whole, or a service's own reason). */
  readonly other: readonly string[];
}

/**
 * Maps a -32602's data onto the form: `/a` (by name) or `/0` (by position) goes to that field.
 * Noise from schemas offering several shapes (`oneOf`: "must match exactly one schema", and the
 * other shape's "must be array") is dropped once a field-level problem explains the refusal.
 */
export function paramsProblems(model: FormModel, data: unknown): ParamsProblems {
  const fields: Record<string, string> = {};
  const other: string[] = [];
  const names = model.shape === 'by-name' || model.shape === 'by-position' ? model.fields.map((f) => f.name) : [];
  const items = Array.isArray(data) ? data : [];
  for (const item of items) {
    if (!isObject(item) || typeof item['message'] !== 'string') continue;
    const path = typeof item['path'] === 'string' ? item['path'] : '';
    const top = /^\/([^/]+)/.exec(path)?.[1];
    const name = top === undefined ? undefined : model.shape === 'by-position' && /^\d+$/.test(top) ? names[Number(top)] : names.includes(top) ? top : undefined;
    const rest = top === undefined ? '' : path.slice(top.length + 1);
    if (name !== undefined) fields[name] ??= `${name}${rest} ${item['message']}`;
    else other.push(`${path === '' ? 'params' : path} ${item['message']}`);
  }
  const reason = isObject(data) && typeof data['reason'] === 'string' ? data['reason'] : undefined;
  if (reason !== undefined) other.push(reason);
  const noise = (text: string): boolean => /must match (exactly one|a) schema|must be (array|object)$/.test(text);
  return { fields, other: Object.keys(fields).length > 0 ? other.filter((t) => !noise(t)) : other };
}
