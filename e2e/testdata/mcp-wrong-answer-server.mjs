// A deliberately wrong MCP server for the e2e tests: its one tool, count,
// declares an outputSchema that requires an integer n, and answers with
// structuredContent whose n is a string. A client that validates
// structured output must refuse the answer. It speaks newline-delimited
// JSON-RPC on stdin and stdout and needs nothing but Node.js.
import readline from 'node:readline';

const send = (v) => process.stdout.write(JSON.stringify(v) + '\n');
const tool = {
  name: 'count',
  description: 'Answers with a count that does not match its own output schema.',
  inputSchema: { type: 'object', properties: {} },
  outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
};

for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === '') continue;
  const msg = JSON.parse(line);
  if (msg.id === undefined) continue; // notifications
  switch (msg.method) {
    case 'initialize':
      send({ jsonrpc: '2.0', id: msg.id, result: {
        protocolVersion: msg.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'wrong-answer', version: '1.0.0' },
      } });
      break;
    case 'tools/list':
      send({ jsonrpc: '2.0', id: msg.id, result: { tools: [tool] } });
      break;
    case 'tools/call':
      send({ jsonrpc: '2.0', id: msg.id, result: {
        content: [{ type: 'text', text: '{"n":"three"}' }],
        structuredContent: { n: 'three' },
      } });
      break;
    default:
      send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'method not found' } });
  }
}
