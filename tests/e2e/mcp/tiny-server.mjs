#!/usr/bin/env node
// A tiny MCP server that reaches no database (stdio, newline-delimited JSON-RPC, no dependency): the e2e tests' proof
// that pgx leaves such a server alone. One tool, `echo`, and one resource. Every message it receives is appended to
// the file in TINY_MCP_LOG (when set), with its environment's pgx-relevant variables, so a test can see what reached it.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const log = (what) => {
  if (process.env.TINY_MCP_LOG) appendFileSync(process.env.TINY_MCP_LOG, JSON.stringify(what) + '\n');
};
const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
log({ started: process.pid, argv: process.argv.slice(2), session: process.env.CLAUDE_CODE_SESSION_ID ?? null, ...(process.env.TINY_MCP_ENV ? { env: process.env } : {}) });

const TOOLS = [
  {
    name: 'echo',
    description: 'Echo the text back.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

createInterface({ input: process.stdin }).on('line', (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  log({ received: msg });
  if (msg.id === undefined) return; // a notification
  const reply = (result) => send({ jsonrpc: '2.0', id: msg.id, result });
  switch (msg.method) {
    case 'initialize':
      return reply({
        protocolVersion: msg.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {}, resources: {} },
        serverInfo: { name: 'tiny', version: '1.0.0' },
      });
    case 'tools/list':
      return reply({ tools: TOOLS });
    case 'tools/call':
      return reply({ content: [{ type: 'text', text: `echo: ${msg.params?.arguments?.text ?? ''}` }] });
    case 'resources/list':
      return reply({ resources: [{ uri: 'tiny://note', name: 'note', mimeType: 'text/plain' }] });
    case 'resources/read':
      return reply({ contents: [{ uri: msg.params?.uri, mimeType: 'text/plain', text: 'a tiny note' }] });
    case 'ping':
      return reply({});
    default:
      return send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
  }
});
process.stdin.on('end', () => {
  log({ stdinEnded: process.pid });
  process.exit(0);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => (log({ signal: sig }), process.exit(0)));
