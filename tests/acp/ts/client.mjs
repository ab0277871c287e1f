// Drives `toolgate acp` with the official TypeScript ACP SDK and prints what happened as JSON.
//
//   node client.mjs PROJECT_DIR PYTHON [answers...]
//
// The agent runs as `PYTHON -m toolgate acp` in this process's environment (the test sets
// OPENAI_BASE_URL to the scripted model). Each prompt of PROMPTS runs in one session;
// permission requests are answered in turn from the answers given (allow_once, reject_once…,
// or "cancel": the client cancels the turn and answers the request as cancelled). Then the
// session is loaded again, and a prompt is sent to a session that does not exist.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [project, python, ...answers] = process.argv.slice(2);
const PROMPTS = ["fix add", "make it nicer", "write outside", "once more"];

const agent = spawn(python, ["-m", "toolgate", "acp"], { stdio: ["pipe", "pipe", "inherit"] });
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const seen = { updates: [], permissions: [], writes: [], stopReasons: [], replayed: [] };
let loading = false;

const app = client({ name: "toolgate-ts-test" })
  .onNotification(methods.client.session.update, ({ params }) => {
    (loading ? seen.replayed : seen.updates).push(params.update);
  })
  .onRequest(methods.client.session.requestPermission, async ({ params, agent }) => {
    seen.permissions.push(params);
    const optionId = answers.shift() ?? "reject_once";
    if (optionId === "cancel") {
      await agent.notify(methods.agent.session.cancel, { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId } };
  })
  .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
    seen.writes.push({ path: params.path, content: params.content });
    writeFileSync(params.path, params.content);
    return {};
  });

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: true } },
  });
  seen.protocolVersion = init.protocolVersion;
  seen.authMethods = init.authMethods.map((m) => m.id);
  const session = await ctx.request(methods.agent.session.new, { cwd: project, mcpServers: [] });
  for (const text of PROMPTS) {
    const done = await ctx.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text }],
    });
    seen.stopReasons.push(done.stopReason);
  }
  loading = true;
  await ctx.request(methods.agent.session.load, {
    sessionId: session.sessionId,
    cwd: project,
    mcpServers: [],
  });
  loading = false;
  try {
    await ctx.request(methods.agent.session.prompt, {
      sessionId: "no-such-session",
      prompt: [{ type: "text", text: "hello" }],
    });
  } catch (error) {
    seen.unknownSessionError = error.code;
  }
});
agent.stdin.end();
await new Promise((resolve) => agent.on("exit", resolve));
process.stdout.write(JSON.stringify(seen) + "\n");
