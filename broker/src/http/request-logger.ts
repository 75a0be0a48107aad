import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
type LogFn = FastifyBaseLogger['info'];

const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * A request's logger (`request.log`), made when the request first logs: fastify makes a pino child per
 * request (its `reqId` bound), which costs a few microseconds and some garbage on every call, while a
 * relayed call logs nothing at the default level (request logging is off; the call gate logs the calls).
 * Refusals and failures still log with the request's `reqId`, as before.
 *
 * @example
 * fastify({ loggerInstance, childLoggerFactory: lazyRequestLogger })
 */
export function lazyRequestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new LazyChild(parent, bindings, options);
}

class LazyChild implements FastifyBaseLogger {
  declare readonly fatal: LogFn;
  declare readonly error: LogFn;
  declare readonly warn: LogFn;
  declare readonly info: LogFn;
  declare readonly debug: LogFn;
  declare readonly trace: LogFn;
  declare readonly silent: LogFn;
  private made: FastifyBaseLogger | undefined;

  constructor(private readonly parent: FastifyBaseLogger, private readonly bindings: Bindings, private readonly options: ChildOptions) {}

  /** The pino child, made on first use. */
  real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
}

// On the prototype, not per instance: no closures per request.
for (const level of levels) {
  Object.defineProperty(LazyChild.prototype, level, {
    value: function (this: LazyChild, ...args: Parameters<LogFn>) {
      this.real()[level](...args);
    },
  });
}
