import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode as McpErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { traced } from '@warren/amqp';
import { requestMessage, type JsonObject } from '@warren/jsonrpc';
import { mayList, type Asker } from '../authz';
import type { CallGate } from '../gateway-calls';
import type { LiveCatalogue } from '../live-catalogue';
import { progressNotifier } from './progress';
import { toolResult } from './tool-result';

export interface McpServerDeps {
  readonly catalogue: LiveCatalogue;
  readonly gate: CallGate;
  /** Whether the gateway exposes this method (the allow-list). */
  readonly allow: (method: string) => boolean;
  readonly timeoutMs: number;
  /** Who the session speaks for: the authorization rule (authz.ts) reads it, and its calls are listed as its token's in /inflight. */
  readonly asker: Asker;
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
      // A tool the rule refuses to this token whatever its arguments (dlq.*) is not listed to it.
      .filter((t) => deps.allow(t.method) && mayList(deps.asker, t.method))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const tool = deps.catalogue.current().tools.get(name);
    // An unknown tool is a protocol error (the client asked for something not listed), not a tool failure.
    if (!tool || !deps.allow(tool.method)) throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const args = (request.params.arguments ?? {}) as JsonObject;
    // A refusal of the authorization rule is a JSON-RPC error (-32006 with data.reason), as on POST /rpc, not a tool failure.
    const refused = deps.gate.refusal(deps.asker, tool.method, args, 'mcp');
    if (refused) throw new McpError(refused.code, refused.message, refused.data);
    // A client that sent a progressToken hears the worker's ctx.progress as notifications/progress.
    const progress = progressNotifier(request.params._meta?.progressToken, extra.sendNotification);
    // A tools/call span (tracing on) under the trace context the client put in `_meta` (MCP's convention), else the active one.
    const attributes = { 'rpc.system': 'jsonrpc', 'rpc.method': 'tools/call', 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': tool.name, 'gen_ai.operation.name': 'execute_tool' };
    return traced(`tools/call ${tool.name}`, attributes, request.params._meta ?? {}, async (trace) => {
      const response = await deps.gate.request(requestMessage(tool.method, args, extra.requestId), 'mcp', { timeoutMs: deps.timeoutMs, signal: extra.signal, ...trace, ...(progress ? { onProgress: progress.listener } : {}) }, deps.asker);
      await progress?.sent();
      return toolResult(tool.name, response);
    });
  });
  return server;
}
