// The machine-readable half of docs/protocol.md: the JSON Schemas (draft-07)
// of what instances and registries publish for discovery. docs/schemas/*.json
// are these objects written out (scripts/write-schemas.ts); a unit test keeps
// them equal, so the schema a Python service reads is the one Warren enforces.
import type { JsonObject } from '@warren/jsonrpc';

/** The protocol version announcements and control messages carry in `v`. */
export const protocolVersion = 1;

/** The JSON Schema draft every schema here, and every params/result schema a method announces, is written in. */
export const jsonSchemaDraft = 'http://json-schema.org/draft-07/schema#';

/** Service names and instance ids end up in queue names, so they keep to the alphabet of names.ts. */
/** Longest announcement interval: a registry keeps a silent instance for three of them. */
export const maxAnnounceIntervalMs = 3_600_000;

const resourceName = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$' };

const schemaRef = { $ref: jsonSchemaDraft };

const text = (maxLength: number): JsonObject => ({ type: 'string', maxLength });

const count = { type: 'integer', minimum: 0 };

/** A schedule a service announces (wire/schedule-declaration.ts); services check theirs against it when they start. */
export const scheduleDeclarationSchema: JsonObject = {
  type: 'object',
  required: ['name', 'method'],
  description: 'A periodic call: the fields of schedule.add without paused. Exactly one of cron and everyMs; a broker refuses (and logs) one its own checks reject.',
  properties: {
    name: resourceName,
    method: { type: 'string', minLength: 1, maxLength: 200 },
    params: { anyOf: [{ type: 'object' }, { type: 'array' }], description: 'Params of every call. Default: none.' },
    cron: { type: 'string', minLength: 1, maxLength: 200, description: '5 fields, or 6 with seconds first (croner syntax).' },
    timezone: { type: 'string', minLength: 1, maxLength: 100, description: 'IANA zone cron is read in. Default "UTC".' },
    everyMs: { type: 'integer', minimum: 1000, description: 'Instead of cron: every this many ms.' },
    overlap: { enum: ['skip', 'queue', 'allow'], description: 'Default "skip".' },
    catchUp: { enum: ['none', 'last', 'all'], description: 'Default "none".' },
    catchUpMax: { type: 'integer', minimum: 1, maximum: 1000, description: 'With catchUp "all". Default 10.' },
    timeoutMs: { type: 'integer', minimum: 1, maximum: 86_400_000, description: 'Deadline of each fired call. Default 60000.' },
  },
};

/** The announcement of a service instance, or its withdrawal. */
export const announcementSchema: JsonObject = {
  $schema: jsonSchemaDraft,
  $id: 'urn:warren:schema:announcement:1',
  title: 'Warren announcement (protocol v1)',
  description: 'Published by every service instance on the fanout exchange NS.control: "announce" on start, every intervalMs, and in answer to an announce-now request; "withdraw" on close. Anything that does not validate is dropped whole by every registry. Properties not named here are ignored.',
  oneOf: [{ $ref: '#/definitions/announce' }, { $ref: '#/definitions/withdraw' }],
  definitions: {
    worker: {
      type: 'object',
      description: "The instance as an operator sees it (the console's worker page): where it runs, how it consumes, what it has done, and the operator's controls it obeys (docs/protocol-discovery.md, \"Worker controls\"). Absent from instances older than it.",
      properties: {
        host: text(255),
        pid: count,
        prefetch: count,
        paused: { type: 'boolean', description: 'An operator paused it: its consumers are cancelled (calls wait in the queue) until resumed. A restart forgets it.' },
        draining: { type: 'boolean', description: 'An operator asked it to drain: it takes no new call, finishes its running ones, then withdraws and stops.' },
        handled: { ...count, description: 'Requests it answered since it started.' },
        failed: { ...count, description: 'Of those, the ones answered with an error.' },
        lastControl: {
          type: 'object',
          required: ['requestId', 'action', 'at'],
          description: 'The last worker control it applied: a sender waits for its requestId here.',
          properties: { requestId: text(64), action: { enum: ['pause', 'resume', 'drain', 'cancel-all'] }, at: count, cancelled: count },
        },
      },
    },
    announce: {
      type: 'object',
      required: ['v', 'type', 'service', 'instanceId', 'startedAt', 'intervalMs', 'methods', 'notifications'],
      properties: {
        v: { const: protocolVersion },
        type: { const: 'announce' },
        service: resourceName,
        instanceId: resourceName,
        startedAt: { ...count, description: 'When the instance started, ms since the epoch: the newest instance of a service describes it.' },
        intervalMs: { type: 'integer', minimum: 1, maximum: maxAnnounceIntervalMs, description: 'The instance announces at least this often; a registry drops it after three intervals of silence.' },
        methods: { type: 'array', maxItems: 1000, items: { $ref: '#/definitions/method' } },
        notifications: { type: 'array', maxItems: 1000, items: { $ref: '#/definitions/notification' }, description: 'Notifications one instance of the service handles (the service event queue).' },
        instanceNotifications: { type: 'array', maxItems: 1000, items: { $ref: '#/definitions/notification' }, description: 'Notifications every instance handles (its own event queue). Default [].' },
        metadata: { type: 'object', maxProperties: 64, additionalProperties: text(1000), description: 'Free-form strings (version, description). Default {}.' },
        running: { ...count, description: 'Calls the instance is running now. Default 0.' },
        consuming: { type: 'boolean', description: 'Its consumers are in place. false while RabbitMQ has cancelled them (the queue deleted, or a classic queue\'s home node down) and the instance keeps re-subscribing. Default true.' },
        durable: { type: 'boolean', description: 'The service is lasting: its request queue never expires and job-style requests are published persistent (they survive a RabbitMQ restart). False for a temporary service, whose queues expire once unused (they are durable all the same). Default false.' },
        queueType: { enum: ['classic', 'quorum'], description: 'x-queue-type of the service queues. Default "classic".' },
        tracking: { $ref: '#/definitions/tracking' },
        worker: { $ref: '#/definitions/worker' },
        schedules: { type: 'array', maxItems: 100, items: { $ref: '#/definitions/schedule' }, description: 'Schedules the service defines in code (docs/scheduling.md, "Schedules in code"): a broker with a schedule store keeps them as source "service:<service>". Default [].' },
      },
    },
    withdraw: {
      type: 'object',
      required: ['v', 'type', 'service', 'instanceId'],
      properties: {
        v: { const: protocolVersion },
        type: { const: 'withdraw' },
        service: resourceName,
        instanceId: resourceName,
      },
    },
    method: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { $ref: '#/definitions/methodName' },
        description: text(10_000),
        params: { ...schemaRef, description: 'JSON Schema (draft-07) of the params: an array schema for by-position, an object schema for by-name, an anyOf of both for either (as Warren announces; a oneOf reads the same).' },
        result: { ...schemaRef, description: 'JSON Schema (draft-07) of the result.' },
        errors: { type: 'array', maxItems: 100, items: { $ref: '#/definitions/error' }, description: 'Application errors the method may answer, besides the protocol ones every method may.' },
        jobStyle: { type: 'boolean', description: 'A long-running job: callers should send it persistent (delivery mode 2) with a generous deadline. Default false.' },
        tool: { $ref: '#/definitions/tool' },
      },
    },
    notification: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { $ref: '#/definitions/methodName' },
        description: text(10_000),
        params: { ...schemaRef, description: 'JSON Schema (draft-07) of the params.' },
      },
    },
    methodName: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'A routing key: 1-255 bytes of UTF-8 without control characters, not in the reserved rpc. namespace.',
      pattern: '^(?!rpc\\.)[^\\u0000-\\u001f\\u007f]+$',
    },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: text(1000), description: text(10_000), data: schemaRef },
    },
    tool: {
      type: 'object',
      required: ['description'],
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,128}$', description: 'Default: the method name.' },
        description: text(10_000),
        inputSchema: { ...schemaRef, description: 'JSON Schema (draft-07) of the tool arguments object. Default: the method params schema.' },
      },
    },
    schedule: scheduleDeclarationSchema,
    tracking: {
      type: 'object',
      required: ['state', 'since', 'degradedTransitions', 'untracked'],
      properties: {
        state: { enum: ['connecting', 'tracking', 'degraded', 'closed'] },
        since: count,
        degradedTransitions: count,
        untracked: count,
      },
    },
  },
};

/** The control message a registry sends when it starts (and after each reconnect) so every instance announces at once. */
export const announceNowSchema: JsonObject = {
  $schema: jsonSchemaDraft,
  $id: 'urn:warren:schema:announce-now:1',
  title: 'Warren announce-now request (protocol v1)',
  description: 'Published by a starting registry on the fanout exchange NS.discover. Every instance answers with its announcement on NS.control after a random delay in [0, min(jitterMs, 1000)) ms (whole ms, so at most min(jitterMs, 1000) - 1). Anything that does not validate is ignored.',
  type: 'object',
  required: ['v', 'type', 'requestId', 'jitterMs'],
  properties: {
    v: { const: protocolVersion },
    type: { const: 'announce-now' },
    requestId: { type: 'string', minLength: 1, maxLength: 100, description: 'Chosen by the requester; for logs only.' },
    jitterMs: { type: 'integer', minimum: 0, maximum: 5000, description: 'Spread of the answers, so a large cluster does not answer in one burst.' },
  },
};

/** Each schema by its file name under docs/schemas/ (written by scripts/write-schemas.ts). */
export const protocolSchemaFiles: Readonly<Record<string, JsonObject>> = {
  'announcement.schema.json': announcementSchema,
  'announce-now.schema.json': announceNowSchema,
};
