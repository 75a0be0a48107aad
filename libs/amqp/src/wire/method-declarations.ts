import type { JsonSchema } from '@warren/jsonrpc';

// What a method declares beside its handler and schemas, as its announcement carries it: the
// service's options (runtime) and the announcement's parser (discovery) both read these shapes,
// so they live below both.

/** An application error a method declares it may answer, for discovery (OpenRPC `errors`). */
export interface ErrorDescription {
  readonly code: number;
  readonly message: string;
  readonly description?: string;
  /** JSON Schema of the error's `data`. */
  readonly data?: JsonSchema;
}

/** How a method presents itself as an MCP tool. */
export interface ToolSpec {
  /** Tool name. @default the method name */
  readonly name?: string;
  readonly description: string;
  /** JSON Schema of the tool's arguments object. @default the method's params schema */
  readonly inputSchema?: JsonSchema;
}
