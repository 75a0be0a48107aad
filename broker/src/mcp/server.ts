import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode as McpErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { requestMessage, type JsonObject } from '@warren/jsonrpc';
import type { CallGate } from '../calls';
import type { LiveCatalogue } from '../live-catalogue';
import { progressNotifier } from './progress';
import { toolResult } from './tool-result';

export interface McpServerDeps {
  readonly catalogue: LiveCatalogue;
  readonly gate: CallGate;
  /** Whether the gateway exposes this method (the allow-list). */
  readonly allow: (method: string) => boolean;
  readonly timeoutMs: number;
  /** The token the session belongs to; its calls are listed as that token's in /inflight. */
  readonly owner?: number;
  readonly info: { readonly name: string; readonly version: string };
}

/**
 * One MCP server per session (the SDK's Server speaks to one transport).
 * The low-level Server rather than McpServer: our tools are not known when
 * the code is written but come and go with the services, each with a JSON
 * Schema, not a zod schema, so they are listed and called by two handlers
 * that read the live catalogue.
 */
export function createMcpServer(deps: McpServerDeps): Server {
  const server = new Server(deps.info, {
    capabilities: { tools: { listChanged: true } },
    instructions: 'Tools are the methods of the live Warren services that declare themselves as tools; tools/list reflects the services running now.',
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...deps.catalogue.current().tools.values()]
      .filter((t) => deps.allow(t.method))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const tool = deps.catalogue.current().tools.get(name);
    // An unknown tool is a protocol error (the client asked for something not listed), not a tool failure.
    if (!tool || !deps.allow(tool.method)) throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const args = (request.params.arguments ?? {}) as JsonObject;
    // A client that sent a progressToken hears the worker's ctx.progress as notifications/progress.
    const progress = progressNotifier(request.params._meta?.progressToken, extra.sendNotification);
    const response = await deps.gate.request(requestMessage(tool.method, args, extra.requestId), 'mcp', { timeoutMs: deps.timeoutMs, signal: extra.signal, ...(progress ? { onProgress: progress.listener } : {}) }, deps.owner);
    await progress?.sent();
    return toolResult(tool.name, response);
  });
  return server;
}
