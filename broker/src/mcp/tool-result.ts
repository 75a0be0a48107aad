import { isErrorResponse, type JsonObject, type ResponseMessage } from '@warren/jsonrpc';

/** An MCP tools/call result, in the key order clients and the design notes show. */
export interface ToolCallResult {
  readonly content: { readonly type: 'text'; readonly text: string }[];
  readonly structuredContent?: JsonObject;
  readonly isError: boolean;
  readonly [key: string]: unknown;
}

/**
 * How a method's answer becomes a tool result. One rule for every tool, so
 * services need not know about MCP:
 *
 * - success with value `v`: text is `v` itself when it is a string and its
 *   JSON otherwise; structuredContent is `{ "result": v }` (MCP wants an
 *   object there, and wrapping every value the same way means a client reads
 *   `structuredContent.result` whatever the method returns);
 * - a JSON-RPC error: isError, text `Error executing tool <name>: <message>`,
 *   no structuredContent.
 *
 * @example
 * toolResult('calculate', { jsonrpc: '2.0', result: '10', id: 1 })
 * // { content: [{ type: 'text', text: '10' }], structuredContent: { result: '10' }, isError: false }
 */
export function toolResult(toolName: string, response: ResponseMessage): ToolCallResult {
  if (isErrorResponse(response)) {
    return { content: [{ type: 'text', text: `Error executing tool ${toolName}: ${response.error.message}` }], isError: true };
  }
  const value = response.result;
  return {
    content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }],
    structuredContent: { result: value },
    isError: false,
  };
}
