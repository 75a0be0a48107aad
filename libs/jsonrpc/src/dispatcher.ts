import { answerPayload, badItemAnswer, isServable, type ServableItem } from './answer';
import { failureResponse, successResponse } from './encode';
import { InvalidParamsError, MethodNotFoundError } from './errors';
import { toJsonRpcError } from './map-errors';
import { SchemaCompiler, type JsonSchema, type ParamsCheck } from './schema';
import type { Decoded, DecodedItem, Id, NotificationMessage, Params, RequestMessage, ResponseMessage } from './types';

/** One call as handlers and middleware see it. `id` is absent for notifications. */
export type InboundCall =
  | { readonly kind: 'request'; readonly method: string; readonly params: Params | undefined; readonly id: Id }
  | { readonly kind: 'notification'; readonly method: string; readonly params: Params | undefined };

export type Handler<P, R, Ctx> = (params: P, ctx: Ctx) => R | Promise<R>;

export interface MethodDefinition<P = unknown, R = unknown, Ctx = unknown> {
  /** JSON Schema the params must satisfy; failures answer -32602 with the details in `data`. */
  readonly params?: JsonSchema;
  /** JSON Schema of the result, for discovery documents. Not enforced. */
  readonly result?: JsonSchema;
  readonly description?: string;
  readonly handler: Handler<P, R, Ctx>;
}

export interface NotificationDefinition<P = unknown, Ctx = unknown> {
  readonly params?: JsonSchema;
  readonly description?: string;
  readonly handler: Handler<P, void, Ctx>;
}

/**
 * Wraps the handler call: `next` runs the rest of the chain. Return the
 * result or throw; never build responses here.
 */
export type Middleware<Ctx> = (next: (call: InboundCall, ctx: Ctx) => Promise<unknown>, call: InboundCall, ctx: Ctx) => Promise<unknown>;

export interface DispatcherOptions<Ctx = unknown> {
  /** Put the stack of non-protocol handler errors into `error.data`. Debugging only. @default false */
  readonly exposeErrorStack?: boolean;
  /** Told about notification failures, which can never be answered. @default ignore */
  readonly onNotificationError?: (error: unknown, call: InboundCall) => void;
  /**
   * Told about each request whose handler (or middleware, or params check) threw, before the
   * error is mapped to the wire answer: the one place a service logs what the caller only sees
   * as a code. Called only on failure, so the success path pays nothing. @default ignore
   */
  readonly onRequestError?: (error: unknown, call: InboundCall, ctx: Ctx) => void;
}

interface Registered<Ctx> {
  readonly check: ParamsCheck | undefined;
  readonly handler: Handler<unknown, unknown, Ctx>;
}

/**
 * Routes decoded messages to registered handlers and builds the responses.
 * Knows no transport: hand it a `Decoded` and a context factory, get back what
 * to send (`null`: send nothing).
 *
 * @example
 * const d = new Dispatcher<void>();
 * d.method('add', { handler: ([a, b]: [number, number]) => a + b });
 * await d.handle(decode('{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}'), () => undefined);
 */
export class Dispatcher<Ctx> {
  private readonly methods = new Map<string, Registered<Ctx>>();
  private readonly notifications = new Map<string, Registered<Ctx>>();
  private readonly middleware: Middleware<Ctx>[] = [];
  private readonly schemas = new SchemaCompiler();
  /** Without middleware, the handler's own return value: a plain value lets `respond` answer without a promise. */
  private chain: (call: InboundCall, ctx: Ctx) => unknown = (call, ctx) => this.invoke(call, ctx);

  constructor(private readonly options: DispatcherOptions<Ctx> = {}) {}

  /** Registers a method. Names beginning with `rpc.` are reserved by the specification unless `reserved` is set. */
  method<P, R>(name: string, definition: MethodDefinition<P, R, Ctx>, opts: { reserved?: boolean } = {}): this {
    this.register(this.methods, name, definition as MethodDefinition<unknown, unknown, Ctx>, opts.reserved === true);
    return this;
  }

  notification<P>(name: string, definition: NotificationDefinition<P, Ctx>): this {
    this.register(this.notifications, name, definition as NotificationDefinition<unknown, Ctx>, false);
    return this;
  }

  /** Adds middleware; the first added is the outermost. */
  use(middleware: Middleware<Ctx>): this {
    this.middleware.push(middleware);
    // Middleware may chain on what `next` returns, so behind middleware the handler's answer is always a promise.
    const inner = async (call: InboundCall, ctx: Ctx): Promise<unknown> => this.invoke(call, ctx);
    this.chain = this.middleware.reduceRight<(call: InboundCall, ctx: Ctx) => Promise<unknown>>((next, mw) => (call, ctx) => mw(next, call, ctx), inner);
    return this;
  }

  hasMethod(name: string): boolean {
    return this.methods.has(name);
  }

  hasNotification(name: string): boolean {
    return this.notifications.has(name);
  }

  get methodNames(): string[] {
    return [...this.methods.keys()];
  }

  get notificationNames(): string[] {
    return [...this.notifications.keys()];
  }

  /** Answers a decoded payload. Batches run concurrently; `null` means nothing is to be sent. */
  handle(decoded: Decoded, contextFor: (message: RequestMessage | NotificationMessage) => Ctx): Promise<ResponseMessage | ResponseMessage[] | null> {
    return answerPayload(decoded, (item) => this.serve(item, contextFor));
  }

  /** Answers one item; `null` for notifications (even failing or unknown ones). */
  async handleItem(item: DecodedItem, contextFor: (message: RequestMessage | NotificationMessage) => Ctx): Promise<ResponseMessage | null> {
    return isServable(item) ? this.serve(item, contextFor) : badItemAnswer(item);
  }

  private async serve(item: ServableItem, contextFor: (message: RequestMessage | NotificationMessage) => Ctx): Promise<ResponseMessage | null> {
    if (item.kind === 'request') return this.respond(item.message, contextFor(item.message));
    await this.handleNotification(item.message, contextFor(item.message));
    return null;
  }

  async handleRequest(message: RequestMessage, ctx: Ctx): Promise<ResponseMessage> {
    return this.respond(message, ctx);
  }

  /**
   * Answers one request; synchronously when its handler returns a plain
   * value, which spares the hot path a chain of promises. Never throws.
   */
  respond(message: RequestMessage, ctx: Ctx): ResponseMessage | Promise<ResponseMessage> {
    let answer: unknown;
    try {
      answer = this.chain({ kind: 'request', method: message.method, params: message.params, id: message.id }, ctx);
    } catch (thrown) {
      return this.failure(message, ctx, thrown);
    }
    if (!isThenable(answer)) return successResponse(message.id, answer);
    return Promise.resolve(answer).then(
      (result) => successResponse(message.id, result),
      (thrown: unknown) => this.failure(message, ctx, thrown),
    );
  }

  async handleNotification(message: NotificationMessage, ctx: Ctx): Promise<void> {
    const call: InboundCall = { kind: 'notification', method: message.method, params: message.params };
    if (!this.notifications.has(message.method)) return;
    try {
      await this.chain(call, ctx);
    } catch (thrown) {
      this.options.onNotificationError?.(thrown, call);
    }
  }

  private failure(message: RequestMessage, ctx: Ctx, thrown: unknown): ResponseMessage {
    const told = this.options.onRequestError;
    if (told) {
      try {
        told(thrown, { kind: 'request', method: message.method, params: message.params, id: message.id }, ctx);
      } catch {
        // A failing listener must not turn an answer into a crash: `respond` never throws.
      }
    }
    return failureResponse(message.id, toJsonRpcError(thrown, this.options.exposeErrorStack === true).toErrorObject());
  }

  /** Runs the handler; throws what it throws and returns what it returns, promise or not. */
  private invoke(call: InboundCall, ctx: Ctx): unknown {
    const entry = (call.kind === 'request' ? this.methods : this.notifications).get(call.method);
    if (!entry) throw new MethodNotFoundError();
    const verdict = entry.check?.(call.params);
    if (verdict && !verdict.ok) throw new InvalidParamsError(undefined, verdict.details);
    return entry.handler(call.params, ctx);
  }

  private register(table: Map<string, Registered<Ctx>>, name: string, definition: { params?: JsonSchema; handler: Handler<unknown, unknown, Ctx> }, reserved: boolean): void {
    if (typeof name !== 'string' || name.length === 0) throw new TypeError('method name must be a non-empty string');
    if (name.startsWith('rpc.') && !reserved) throw new TypeError(`method names beginning with "rpc." are reserved: ${name}`);
    if (table.has(name)) throw new TypeError(`already registered: ${name}`);
    table.set(name, { check: definition.params === undefined ? undefined : this.schemas.compile(definition.params), handler: definition.handler });
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

