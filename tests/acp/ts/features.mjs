// Drives `toolgate acp` with the official TypeScript ACP SDK through what a turn shows beyond
// the calls — modes, the plan, thoughts, results, stop reasons, /undo and /new — and prints
// what happened as JSON.
//
//   node features.mjs PROJECT_DIR PYTHON
//
// The agent runs as `PYTHON -m toolgate acp` in this process's environment (the test sets
// OPENAI_BASE_URL to the scripted model). Permission requests are answered allow_once.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [project, python] = process.argv.slice(2);

const agent = spawn(python, ["-m", "toolgate", "acp"], { stdio: ["pipe", "pipe", "inherit"] });
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const seen = { updates: [], permissions: [], writes: [], stopReasons: [] };

const app = client({ name: "toolgate-ts-features" })
  .onNotification(methods.client.session.update, ({ params }) => {
    seen.updates.push(params.update);
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    seen.permissions.push(params);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
    seen.writes.push({ path: params.path, content: params.content });
    writeFileSync(params.path, params.content);
    return {};
  });

await app.connectWith(stream, async (ctx) => {
  await ctx.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: true } },
  });
  const session = await ctx.request(methods.agent.session.new, { cwd: project, mcpServers: [] });
  const sessionId = session.sessionId;
  seen.modes = session.modes;
  seen.configOptions = session.configOptions;
  await ctx.request(methods.agent.session.setMode, { sessionId, modeId: "auto-edits" });
  const prompt = async (text) => {
    const done = await ctx.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    seen.stopReasons.push(done.stopReason);
  };
  await prompt("plan and fix add");
  const options = await ctx.request(methods.agent.session.setConfigOption, {
    sessionId,
    configId: "approval",
    value: "ask",
  });
  seen.approvalAfter = options.configOptions.find((o) => o.id === "approval").currentValue;
  await prompt("/undo");
  await prompt("/new");
  await prompt("hello");
});
agent.stdin.end();
await new Promise((resolve) => agent.on("exit", resolve));
process.stdout.write(JSON.stringify(seen) + "\n");
