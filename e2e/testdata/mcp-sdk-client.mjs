// A bridge from the Go e2e tests to the official MCP TypeScript SDK
// client: it starts an MCP server over stdio through the SDK, lists its
// tools (which makes the SDK compile every outputSchema), then serves tool
// calls one line at a time.
//
//   node mcp-sdk-client.mjs NPM_PREFIX COMMAND [ARG...]
//
// NPM_PREFIX is the npm prefix where @modelcontextprotocol/sdk is
// installed. Output, one JSON object per line on stdout:
//   {"ready":{"server":...,"tools":[...]}}      once connected
//   {"id":N,"result":CallToolResult}            per call
//   {"id":N,"error":"message"}                  per failed call
// Input, one JSON object per line on stdin: {"id":N,"tool":NAME,"arguments":{...}}.
// The SDK's callTool validates structuredContent against the tool's
// outputSchema and throws when it does not match, or when a tool with an
// outputSchema answers without structuredContent; that surfaces as error.
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';

const [prefix, command, ...args] = process.argv.slice(2);
const require = createRequire(path.join(prefix, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');

const client = new Client({ name: 'memsvc-e2e', version: '1.0.0' });
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
await client.connect(transport);
const { tools } = await client.listTools();
out({ ready: { server: client.getServerVersion(), protocol: transport.protocolVersion ?? null, tools } });

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === '') continue;
  const req = JSON.parse(line);
  try {
    const result = await client.callTool({ name: req.tool, arguments: req.arguments });
    out({ id: req.id, result });
  } catch (e) {
    out({ id: req.id, error: String(e && e.message ? e.message : e) });
  }
}
await client.close();
