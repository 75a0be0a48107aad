// The kinds of value an environment variable holds, each a zod schema from the
// variable's text to its value. Error messages are written to follow the
// variable's name ("PREFETCH must be a positive integer"), so the reader
// (env-read.ts) can prefix the name and the value it got.
import { z } from 'zod';

/** One kind of value: how the docs name it, and the schema that parses the text. */
export interface EnvKind<T> {
  /** The type column of the docs' table. */
  readonly type: string;
  /** Parses the variable's text (trimmed; empty counts as unset unless `keepEmpty`). */
  readonly schema: z.ZodType<T, string>;
  /** The value is a secret (a token, a URL with a password): errors never echo it. */
  readonly secret?: boolean;
  /** An empty value means something (`GATEWAY_TOKENS=""` is an error, not "unset"); the text is passed untrimmed. */
  readonly keepEmpty?: boolean;
}

/** Any text. */
export const text: EnvKind<string> = { type: 'string', schema: z.string() };

/** Any text, where set-but-empty means something of its own (passed as it is, untrimmed). */
export const rawText: EnvKind<string> = { type: 'string', schema: z.string(), keepEmpty: true };

/** A comma-separated list; blanks around and empty entries are dropped. */
export const list: EnvKind<string[]> = {
  type: 'comma-separated list',
  schema: z.string().transform((s) => s.split(',').map((item) => item.trim()).filter((item) => item.length > 0)),
};

/**
 * RabbitMQ URLs: each `amqp://` or `amqps://`, refused at once otherwise (an `http://` one would
 * have the connection retry for ever). Secret, so the error names the entry and its scheme only.
 * The same rule guards `urls` in code (@warren/amqp-transport's amqp-urls.ts).
 */
export const amqpUrlList: EnvKind<string[]> = {
  type: 'comma-separated amqp(s) URLs',
  secret: true,
  schema: list.schema.transform((urls, ctx) => {
    urls.forEach((url, i) => {
      // The scheme only: the rest is amqplib's to read (it takes URLs WHATWG's parser refuses).
      const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
      if (scheme === 'amqp' || scheme === 'amqps') return;
      const entry = urls.length > 1 ? `entry ${i + 1}` : 'the URL';
      ctx.issues.push({ code: 'custom', message: `must be amqp:// or amqps:// URLs (${entry} ${scheme === undefined ? 'has no scheme' : `has scheme "${scheme}:"`})`, input: url });
    });
    return urls;
  }),
};

/** A whole number from 1, as `Number` reads it (the services' historical reading: `1e3` is 1000). */
export const positiveInt: EnvKind<number> = {
  type: 'integer ≥ 1',
  schema: z.string().transform(Number).pipe(z.number({ error: 'must be a positive integer' }).int({ error: 'must be a positive integer' }).min(1, { error: 'must be a positive integer' }).max(Number.MAX_SAFE_INTEGER, { error: 'must be a positive integer' })),
};

/** Digits only, 0 allowed (the broker's reading). */
export const digits: EnvKind<number> = {
  type: 'integer ≥ 0',
  schema: z.string().regex(/^\d+$/, { error: 'must be a non-negative integer' }).transform(Number),
};

/** A TCP port to listen on, 1-65535. */
export const port: EnvKind<number> = {
  type: 'port 1-65535',
  schema: positiveInt.schema.pipe(z.number().max(65535, { error: 'must be a TCP port (1-65535)' })),
};

/** A positive decimal (fractions allowed), written as digits with an optional fraction. */
export const positiveNumber: EnvKind<number> = {
  type: 'number > 0',
  schema: z.string().regex(/^\d+(\.\d+)?$/, { error: 'must be a positive number' }).transform(Number).pipe(z.number().positive({ error: 'must be a positive number' })),
};

/** One of a few words. */
export function oneOf<const W extends readonly [string, ...string[]]>(words: W): EnvKind<W[number]> {
  return { type: words.join(' | '), schema: z.enum(words, { error: `must be ${words.map((w) => JSON.stringify(w)).join(' or ')}` }) };
}

/** An http(s) URL; it may hold a password, so errors do not echo it. */
export const httpUrl: EnvKind<string> = {
  type: 'http(s) URL',
  schema: z.string().refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), { error: 'must be an http(s) URL' }),
  secret: true,
};

/**
 * Bearer tokens, comma-separated, read strictly: set but empty (`""` or `","` from a broken template)
 * would otherwise mean "no auth", so each entry must be a token, with no whitespace inside.
 */
export const tokens: EnvKind<string[]> = {
  type: 'comma-separated tokens',
  secret: true,
  keepEmpty: true,
  schema: z.string().transform((raw, ctx) => {
    const items = raw.split(',').map((t) => t.trim());
    const problem = items.every((t) => t.length === 0)
      ? `is set but holds no token (got ${JSON.stringify(raw)}); give tokens, or unset it and set GATEWAY_AUTH=none to run without auth`
      : items.some((t) => t.length === 0)
        ? 'has an empty entry (got a stray comma); list tokens separated by single commas'
        : items.some((t) => /\s/.test(t))
          ? 'has an entry with whitespace inside; tokens are sent as "Authorization: Bearer <token>" and cannot hold spaces'
          : undefined;
    if (problem === undefined) return items;
    ctx.issues.push({ code: 'custom', message: problem, input: raw });
    return z.NEVER;
  }),
};
