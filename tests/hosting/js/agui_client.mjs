// Drives the official @ag-ui/client HttpAgent against a live agentfootprint AG-UI server.
// Usage: node agui_client.mjs http://127.0.0.1:PORT/agui
// Prints one JSON report on stdout (what each scenario saw); exits 1 with the error on stderr if anything throws.
import { HttpAgent, buildResumeArray } from "@ag-ui/client";

const url = process.argv[2];
if (!url) {
  console.error("usage: node agui_client.mjs URL");
  process.exit(2);
}

function agent(threadId) {
  return new HttpAgent({ url, threadId, headers: { "x-test-user": "node-client" } });
}

function userMessage(id, content) {
  return { id, role: "user", content };
}

async function run(client, parameters = {}) {
  const seen = [];
  let outcome = null;
  let error = null;
  const result = await client.runAgent(parameters, {
    onEvent({ event }) {
      seen.push(event.type);
    },
    onRunFinishedEvent(params) {
      outcome = {
        outcome: params.outcome,
        interrupts: params.interrupts ?? [],
        pendingToolCallIds: params.pendingToolCallIds ?? [],
      };
    },
    onRunErrorEvent({ event }) {
      error = { code: event.code, message: event.message };
    },
  });
  return { events: seen, outcome, error, newMessages: result.newMessages };
}

function assistantText(messages) {
  return messages
    .filter((m) => m.role === "assistant" && typeof m.content === "string")
    .map((m) => m.content)
    .join("");
}

const report = {};

// 1. A run: streamed text becomes one assistant message.
{
  const client = agent("node-text");
  client.addMessage(userMessage("u1", "hi"));
  const first = await run(client, { runId: "r1" });
  report.text = { ...first, text: assistantText(first.newMessages) };
  // A second turn on the same thread: the client resends its whole history; the server reads only the new message.
  client.addMessage(userMessage("u2", "hi again"));
  const second = await run(client, { runId: "r2" });
  report.second = { ...second, text: assistantText(second.newMessages), messageCount: client.messages.length };
}

// 2. A backend tool call: the call and its result arrive as messages.
{
  const client = agent("node-tool");
  client.addMessage(userMessage("u1", "weather please"));
  const result = await run(client, { runId: "r1" });
  const calls = client.messages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []));
  const results = client.messages.filter((m) => m.role === "tool");
  report.tool = {
    ...result,
    text: assistantText(result.newMessages),
    toolCalls: calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
    toolResults: results.map((m) => ({ toolCallId: m.toolCallId, content: m.content })),
  };
}

// 3. An interrupt and its resume: the client answers the interrupt it was handed.
{
  const client = agent("node-interrupt");
  client.addMessage(userMessage("u1", "ask me"));
  const paused = await run(client, { runId: "r1" });
  const pending = client.pendingInterrupts.map((i) => ({ id: i.id, reason: i.reason, message: i.message }));
  const resume = buildResumeArray(client.pendingInterrupts, {
    [client.pendingInterrupts[0].id]: { status: "resolved", payload: "tea" },
  });
  const resumed = await run(client, { runId: "r2", resume });
  report.interrupt = {
    paused,
    pending,
    resumed: { ...resumed, text: assistantText(resumed.newMessages) },
    pendingAfter: client.pendingInterrupts.length,
  };
}

// 4. A frontend tool: the page answers the pending call with a tool message and runs again.
{
  const client = agent("node-frontend");
  client.addMessage(userMessage("u1", "pick a color"));
  const tools = [{ name: "pick_color", description: "the page's words", parameters: { type: "object" } }];
  const asked = await run(client, { runId: "r1", tools });
  const callId = asked.outcome?.pendingToolCallIds?.[0];
  client.addMessage({ id: "t1", role: "tool", toolCallId: callId, content: "blue" });
  const answered = await run(client, { runId: "r2", tools });
  report.frontend = { asked, callId, answered: { ...answered, text: assistantText(answered.newMessages) } };
}

process.stdout.write(JSON.stringify(report) + "\n");
