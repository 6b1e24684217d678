// The official ACP TypeScript client (@agentclientprotocol/sdk) driving the
// real `scv acp` binary through every scenario of TestOfficialClient
// (internal/acp/node_test.go), against the scripted fake model the Go test
// runs. Every response and notification from scv acp is also checked
// against the SDK's own zod schemas. Prints "ok <scenario>" per scenario;
// any failed assertion exits non-zero with the reason.
//
// Environment: SCV_BIN, SCV_HOME, WORK (the workspace), ACP_SDK (the
// SDK's package directory), MCP_CMD and MCP_ENV (the fake MCP server),
// STORED (a session made with origin tui), PID_DIR (where bash calls leave
// their pids).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const env = process.env;
const sdkDir = env.ACP_SDK;
const acp = await import(pathToFileURL(path.join(sdkDir, "dist/v1/stable/acp.js")).href);
const z = await import(pathToFileURL(path.join(sdkDir, "dist/v1/schema/zod.gen.js")).href);
const work = env.WORK;

function startAgent() {
  const child = spawn(env.SCV_BIN, ["acp"], { stdio: ["pipe", "pipe", "inherit"], env: { ...env } });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, at: Date.now() })));
  return { child, exited };
}

// alive says pid is a live process (a zombie left to an init that does
// not reap is not).
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZXx]$/.test(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]);
  } catch {
    return false;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, check, ms = 20000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = check();
    if (v) return v;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// ---- the SDK-driven run ----
const updates = new Map(); // sessionId -> [update]
const permissions = []; // {sessionId, toolCall, options}
let answer = () => ({ outcome: { outcome: "cancelled" } });

const app = acp
  .client({ name: "scv-acp-test" })
  .onNotification("session/update", ({ params }) => {
    z.zSessionNotification.parse(params);
    if (!updates.has(params.sessionId)) updates.set(params.sessionId, []);
    updates.get(params.sessionId).push(params.update);
  })
  .onRequest("session/request_permission", async ({ params }) => {
    z.zRequestPermissionRequest.parse(params);
    permissions.push(params);
    return answer(params);
  });

const { child, exited } = startAgent();
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

function take(sid) {
  const u = updates.get(sid) ?? [];
  updates.set(sid, []);
  return u;
}

function select(id) {
  return () => ({ outcome: { outcome: "selected", optionId: id } });
}

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "test", version: "1" } });
  z.zInitializeResponse.parse(init);
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentInfo.name, "scv");
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.equal(init.agentCapabilities.mcpCapabilities.http, true);
  assert.deepEqual(init.authMethods, []);
  const newer = await ctx.request("initialize", { protocolVersion: 9, clientCapabilities: {} });
  assert.equal(newer.protocolVersion, 1, "a client offering a newer version gets 1");

  async function newSession(mcpServers = []) {
    const res = await ctx.request("session/new", { cwd: work, mcpServers });
    z.zNewSessionResponse.parse(res);
    return res;
  }
  async function prompt(sid, text) {
    const res = await ctx.request("session/prompt", { sessionId: sid, prompt: [{ type: "text", text }] });
    z.zPromptResponse.parse(res);
    return res;
  }
  const kinds = (list) => list.map((u) => u.sessionUpdate);

  // plain answer, streamed chunks in order
  const s1 = await newSession();
  assert.deepEqual(s1.modes.availableModes.map((m) => m.id), ["ask-on-risk", "ask-always", "deny-on-risk", "plan"]);
  assert.equal(s1.modes.currentModeId, "ask-on-risk");
  assert.ok(s1.configOptions.some((o) => o.id === "mode" && o.currentValue === "ask-on-risk"), "mode selector");
  // The model selector follows once the provider listed its models.
  const models = await waitFor("the model selector", () =>
    (updates.get(s1.sessionId) ?? []).find((x) => x.sessionUpdate === "config_option_update"));
  assert.ok(models.configOptions.some((o) => o.id === "model" && o.options.some((x) => x.value === "gpt-5")), "model selector");
  let r = await prompt(s1.sessionId, "hi");
  assert.equal(r.stopReason, "end_turn");
  let u = take(s1.sessionId);
  assert.deepEqual(u.filter((x) => x.sessionUpdate === "agent_message_chunk").map((x) => x.content.text), ["Hel", "lo", " world"]);
  assert.deepEqual(u.filter((x) => x.sessionUpdate === "agent_thought_chunk").map((x) => x.content.text), ["pondering"]);
  assert.ok(kinds(u).indexOf("agent_thought_chunk") < kinds(u).indexOf("agent_message_chunk"));
  assert.ok(u.some((x) => x.sessionUpdate === "usage_update" && x.size === 128000));
  console.log("ok plain");

  // bash allowed once
  answer = select("allow_once");
  r = await prompt(s1.sessionId, "run it once");
  assert.equal(r.stopReason, "end_turn");
  u = take(s1.sessionId);
  let p = permissions.pop();
  assert.equal(p.toolCall.kind, "execute");
  assert.match(p.toolCall.title, /echo once > once\.txt/);
  assert.deepEqual(p.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
  assert.match(p.options[1].name, /echo once/);
  const call = u.find((x) => x.sessionUpdate === "tool_call");
  assert.equal(call.toolCallId, "b1");
  assert.equal(call.status, "pending");
  assert.deepEqual(call.rawInput, { command: "echo once > once.txt" });
  assert.deepEqual(u.filter((x) => x.toolCallId === "b1" && x.status).map((x) => x.status), ["pending", "in_progress", "completed"]);
  assert.equal(fs.readFileSync(path.join(work, "once.txt"), "utf8"), "once\n");
  console.log("ok allow_once");

  // allowed always: no second request for the same command
  answer = select("allow_always");
  const before = permissions.length;
  r = await prompt(s1.sessionId, "run it twice");
  assert.equal(r.stopReason, "end_turn");
  u = take(s1.sessionId);
  assert.equal(permissions.length - before, 1, "one permission request for two calls of one command");
  assert.deepEqual(u.filter((x) => x.sessionUpdate === "tool_call_update" && x.status === "completed").map((x) => x.toolCallId), ["b2", "b3"]);
  console.log("ok allow_always");

  // rejected: the call does not run, its update says what the model is told
  answer = select("reject_once");
  r = await prompt(s1.sessionId, "try this");
  assert.equal(r.stopReason, "end_turn");
  u = take(s1.sessionId);
  const failed = u.find((x) => x.toolCallId === "b4" && x.status === "failed");
  assert.match(failed.content[0].content.text, /denied: the user did not approve/);
  assert.equal(fs.existsSync(path.join(work, "nope.txt")), false);
  console.log("ok reject");

  // a write shows its diff
  answer = select("allow_once");
  r = await prompt(s1.sessionId, "edit notes");
  assert.equal(r.stopReason, "end_turn");
  u = take(s1.sessionId);
  p = permissions.pop();
  assert.equal(p.toolCall.kind, "edit");
  const diff = p.toolCall.content.find((c) => c.type === "diff");
  assert.deepEqual(diff, { type: "diff", path: path.join(work, "notes.txt"), oldText: "one\ntwo\n", newText: "one\nTWO\n" });
  assert.deepEqual(p.toolCall.locations, [{ path: path.join(work, "notes.txt") }]);
  const done = u.find((x) => x.toolCallId === "w1" && x.status === "completed");
  assert.ok(done.content.some((c) => c.type === "diff" && c.newText === "one\nTWO\n"));
  console.log("ok write_diff");

  // cancel during a long bash call: no survivor, cancelled
  answer = select("allow_once");
  const pidFile = path.join(env.PID_DIR, "long.pid");
  const running = prompt(s1.sessionId, "wait for it");
  const pid = await waitFor("the long bash call's pid", () => {
    try {
      return parseInt(fs.readFileSync(pidFile, "utf8"), 10) || 0;
    } catch {
      return 0;
    }
  });
  await ctx.notify("session/cancel", { sessionId: s1.sessionId });
  r = await running;
  assert.equal(r.stopReason, "cancelled");
  await waitFor("the bash process to be gone", () => !alive(pid));
  u = take(s1.sessionId);
  assert.ok(u.some((x) => x.toolCallId === "b5" && x.status === "failed"));
  console.log("ok cancel");

  // deny-on-risk: refused without a permission request
  const s2 = await newSession();
  await ctx.request("session/set_mode", { sessionId: s2.sessionId, modeId: "deny-on-risk" });
  const asked = permissions.length;
  r = await prompt(s2.sessionId, "try to run");
  assert.equal(r.stopReason, "end_turn");
  assert.equal(permissions.length, asked, "no permission request under deny-on-risk");
  u = take(s2.sessionId);
  assert.match(u.find((x) => x.toolCallId === "d1" && x.status === "failed").content[0].content.text, /deny-on-risk/);
  assert.equal(fs.existsSync(path.join(work, "denied.txt")), false);
  console.log("ok set_mode");

  // plan mode: a write refused without a permission request, the todo
  // list as a plan update (checked against the schema with every update)
  const s2p = await newSession();
  await ctx.request("session/set_mode", { sessionId: s2p.sessionId, modeId: "plan" });
  const askedBefore = permissions.length;
  r = await prompt(s2p.sessionId, "plan a change");
  assert.equal(r.stopReason, "end_turn");
  assert.equal(permissions.length, askedBefore, "no permission request in plan mode");
  u = take(s2p.sessionId);
  assert.match(u.find((x) => x.toolCallId === "p1" && x.status === "failed").content[0].content.text, /^plan mode: read-only/);
  const plan = u.find((x) => x.sessionUpdate === "plan");
  assert.deepEqual(plan.entries, [
    { content: "change notes", priority: "medium", status: "in_progress" },
    { content: "check them", priority: "medium", status: "pending" },
  ]);
  assert.equal(fs.readFileSync(path.join(work, "notes.txt"), "utf8").includes("PLANNED"), false);
  // the mode as a config option: a policy leaves plan mode, and the
  // editor is told with current_mode_update
  const set = await ctx.request("session/set_config_option", { sessionId: s2p.sessionId, configId: "mode", value: "ask-always" });
  assert.ok(set.configOptions.some((o) => o.id === "mode" && o.currentValue === "ask-always"));
  assert.ok(take(s2p.sessionId).some((x) => x.sessionUpdate === "current_mode_update" && x.currentModeId === "ask-always"));
  console.log("ok plan");

  // an MCP server the editor supplies
  const mcpEnv = JSON.parse(env.MCP_ENV);
  const s3 = await newSession([{ name: "editor", command: env.MCP_CMD, args: [], env: mcpEnv }]);
  answer = select("allow_once");
  r = await prompt(s3.sessionId, "echo through the editor's server");
  assert.equal(r.stopReason, "end_turn");
  p = permissions.pop();
  assert.equal(p.toolCall.kind, "execute", "an editor server's tool has risk process");
  u = take(s3.sessionId);
  assert.match(u.find((x) => x.toolCallId === "m1" && x.status === "completed").content[0].content.text, /echo: hello mcp/);
  console.log("ok mcp");

  // load a session made in the TUI: listed, replayed, continued
  const list = await ctx.request("session/list", { cwd: work });
  z.zListSessionsResponse.parse(list);
  assert.ok(list.sessions.some((s) => s.sessionId === env.STORED), "the TUI's session is listed");
  const loaded = await ctx.request("session/load", { sessionId: env.STORED, cwd: work, mcpServers: [] });
  z.zLoadSessionResponse.parse(loaded);
  u = take(env.STORED);
  assert.deepEqual(u.map((x) => [x.sessionUpdate, x.content?.text]), [
    ["user_message_chunk", "a prompt typed in the TUI"],
    ["agent_message_chunk", "an answer shown in the TUI"],
  ]);
  r = await prompt(env.STORED, "go on in the editor");
  assert.equal(r.stopReason, "end_turn");
  assert.deepEqual(take(env.STORED).filter((x) => x.sessionUpdate === "agent_message_chunk").map((x) => x.content.text), ["continued"]);
  console.log("ok load");

  // bad params through the SDK: errors naming the field
  await assert.rejects(ctx.request("session/new", { cwd: "relative", mcpServers: [] }), (e) => e.code === -32602 && /cwd "relative"/.test(e.message));
  await assert.rejects(ctx.request("session/prompt", { sessionId: "s_unknown", prompt: [{ type: "text", text: "x" }] }), (e) => /s_unknown/.test(e.message));
  await assert.rejects(ctx.request("session/prompt", { sessionId: s1.sessionId, prompt: [{ type: "image", mimeType: "image/png", data: "AA==" }] }), (e) => e.code === -32602 && /image/.test(e.message));
  await assert.rejects(ctx.request("session/set_mode", { sessionId: s1.sessionId, modeId: "yolo" }), (e) => e.code === -32602 && /yolo/.test(e.message));
  console.log("ok bad_params");
});
child.stdin.end();
let end = await exited;
assert.equal(end.code, 0, `scv acp exited with ${end.code} (${end.signal})`);
console.log("ok eof");

// ---- raw lines: what no SDK would send ----
{
  const { child, exited } = startAgent();
  const lines = [];
  let buf = "";
  child.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      lines.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
    }
  });
  const send = (s) => child.stdin.write(s + "\n");
  const reply = (id) => waitFor(`the answer to ${id}`, () => lines.find((l) => l.id === id && !l.method));
  send("{this is not json");
  const parse = await waitFor("the parse error", () => lines.find((l) => l.error?.code === -32700));
  assert.equal(parse.id, null);
  send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } }));
  assert.equal((await reply(1)).result.protocolVersion, 1, "the connection goes on after a parse error");
  send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/teleport", params: {} }));
  assert.equal((await reply(2)).error.code, -32601);
  send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/new", params: { mcpServers: [] } }));
  let e = (await reply(3)).error;
  assert.equal(e.code, -32602);
  assert.match(e.message, /cwd is required/);
  send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "session/new", params: { cwd: work, mcpServers: "none" } }));
  assert.match((await reply(4)).error.message, /mcpServers must be an array/);
  send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "session/prompt", params: { sessionId: "s_gone", prompt: [{ type: "text", text: "x" }] } }));
  assert.match((await reply(5)).error.message, /s_gone/);
  send(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "session/new", params: { cwd: work, mcpServers: [] } }));
  const sid = (await reply(6)).result.sessionId;
  send(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "session/prompt", params: { sessionId: sid, prompt: [{ type: "text", text: "first" }] } }));
  const ask = await waitFor("the permission request", () => lines.find((l) => l.method === "session/request_permission"));
  send(JSON.stringify({ jsonrpc: "2.0", id: 8, method: "session/prompt", params: { sessionId: sid, prompt: [{ type: "text", text: "second" }] } }));
  e = (await reply(8)).error;
  assert.equal(e.code, -32600);
  assert.match(e.message, /already running a prompt/);
  console.log("ok raw_bad_input");
  // EOF while the approved bash call runs: the turn is cancelled, the
  // command stopped, scv acp exits 0.
  send(JSON.stringify({ jsonrpc: "2.0", id: ask.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } }));
  const eofPid = path.join(env.PID_DIR, "eof.pid");
  const pid = await waitFor("the bash call's pid", () => {
    try {
      return parseInt(fs.readFileSync(eofPid, "utf8"), 10) || 0;
    } catch {
      return 0;
    }
  });
  const eofAt = Date.now();
  child.stdin.end();
  end = await exited;
  assert.equal(end.code, 0);
  const last = lines.find((l) => l.id === 7);
  assert.equal(last?.result?.stopReason, "cancelled", "the running prompt answers cancelled at EOF");
  await waitFor("the bash call's process to be gone", () => !alive(pid), 5000);
  console.log(`ok eof_running (exit ${end.at - eofAt} ms after EOF)`);
}
