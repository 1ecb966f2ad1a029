// The official MCP TypeScript SDK as a peer client, for comparing Millforge's MCP client per call.
//
// Connects `Client` + `StdioClientTransport` to the stdio server given after `--` (or
// `StreamableHTTPClientTransport` when what follows `--` is one http:// URL), runs the
// initialize handshake, then N sequential `tools/call` of TOOL with ARGS_JSON, and prints one JSON
// line: {"client":"ts-sdk","calls":N,"total_us":...,"per_call_us":...}. Only the N calls are
// timed (not Node's start, the server's spawn or the handshake). A call that fails, or whose result
// has isError, ends the run with exit 1 and a message on stderr. The server's stderr is inherited;
// it gets this process's whole environment (the SDK alone would pass only HOME, PATH and a few).
//
// The SDK comes from the cache scripts/fetch-mcp-servers.sh fills, never from the source tree:
// MF_MCP_NODE_MODULES names its node_modules directory (DEST/node_modules).
//
// usage: MF_MCP_NODE_MODULES=DIR node bench/mcp/sdk_client.mjs N TOOL ARGS_JSON -- server-cmd [args...]|URL
//   e.g. ... node bench/mcp/sdk_client.mjs 1000 echo '{"text":"hi"}' -- tests/server/mcp_misbehave.py
import path from "node:path";
import { pathToFileURL } from "node:url";

function usage(msg) {
  process.stderr.write(`sdk_client: ${msg}\n` +
    "usage: MF_MCP_NODE_MODULES=DIR node sdk_client.mjs N TOOL ARGS_JSON -- server-cmd [args...]\n");
  process.exit(2);
}

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep !== 3 || argv.length < 5) usage("expected N TOOL ARGS_JSON -- server-cmd [args...]");
const calls = Number(argv[0]);
if (!Number.isInteger(calls) || calls < 1) usage(`N must be a positive integer, not ${argv[0]}`);
const tool = argv[1];
let toolArgs;
try {
  toolArgs = JSON.parse(argv[2]);
} catch (e) {
  usage(`ARGS_JSON is not JSON: ${e.message}`);
}
if (toolArgs === null || typeof toolArgs !== "object" || Array.isArray(toolArgs)) usage("ARGS_JSON must be an object");
const [command, ...commandArgs] = argv.slice(sep + 1);

const nodeModules = process.env.MF_MCP_NODE_MODULES;
if (!nodeModules) usage("MF_MCP_NODE_MODULES is not set (scripts/fetch-mcp-servers.sh's DEST/node_modules)");
const sdk = path.resolve(nodeModules, "@modelcontextprotocol/sdk/dist/esm");
const load = (rel) => import(pathToFileURL(path.join(sdk, rel)).href);
const { Client } = await load("client/index.js");

const client = new Client({ name: "millforge-bench-ts-sdk", version: "1.0.0" });
let transport;
if (/^https?:\/\//.test(command) && commandArgs.length === 0) {
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(command));
} else {
  const { StdioClientTransport } = await load("client/stdio.js");
  transport = new StdioClientTransport({ command, args: commandArgs, env: process.env, stderr: "inherit" });
}
let status = 0;
try {
  await client.connect(transport); // spawns the server, initialize, notifications/initialized
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    const result = await client.callTool({ name: tool, arguments: toolArgs });
    if (result.isError) throw new Error(`call ${i + 1} returned isError: ${JSON.stringify(result.content)}`);
  }
  const totalUs = Number(process.hrtime.bigint() - start) / 1000;
  process.stdout.write(JSON.stringify({
    client: "ts-sdk",
    calls,
    total_us: Math.round(totalUs),
    per_call_us: Math.round((totalUs / calls) * 10) / 10,
  }) + "\n");
} catch (e) {
  process.stderr.write(`sdk_client: ${e && e.message ? e.message : e}\n`);
  status = 1;
} finally {
  await client.close().catch(() => {});
}
process.exit(status);
