// AG-UI's own client (@ag-ui/client HttpAgent, 1.0) drives a frontend tool through eve-py serve's POST /ag-ui,
// the way CopilotKit runs its own tools: the run ends with a success whose last message holds the open tool
// call; the client runs its tool, adds the ToolMessage and runs again. Usage: node drive_frontend_tools.mjs URL TOKEN
// Prints one JSON line per step ({"step": ...}); test_ag_ui_client.py checks them.
import { HttpAgent } from "@ag-ui/client";

const [url, token] = process.argv.slice(2);
const report = (step, data) => console.log(JSON.stringify({ step, ...data }));

const changeBackground = {
  name: "change_background",
  description: "Change the page's background colour.",
  parameters: { type: "object", properties: { color: { type: "string" } }, required: ["color"] },
};
const tools = [changeBackground];

function newAgent(threadId) {
  return new HttpAgent({ url: `${url}/ag-ui`, headers: { authorization: `Bearer ${token}` }, threadId });
}

async function run(agent, params = {}) {
  let finished;
  let error;
  const results = [];
  let newMessages = [];
  try {
    ({ newMessages } = await agent.runAgent(
      { tools, ...params },
      {
        onRunFinishedEvent: ({ event }) => {
          finished = event;
        },
        onRunErrorEvent: ({ event }) => {
          error = event;
        },
        onToolCallResultEvent: ({ event }) => {
          results.push({ toolCallId: event.toolCallId, content: event.content });
        },
      },
    ));
  } catch (thrown) {
    error = error ?? { message: String(thrown) };
  }
  const last = agent.messages.at(-1);
  return {
    outcome: finished?.outcome?.type ?? (finished ? "success" : undefined),
    interrupts: agent.pendingInterrupts,
    last: last ? { role: last.role, toolCalls: last.toolCalls, content: last.content } : undefined,
    newMessages,
    results,
    error: error ? { message: error.message, code: error.code } : undefined,
  };
}

// What CopilotKit does after a run: run each new frontend tool call that has no result yet, add its ToolMessage.
function runFrontendTools(agent, newMessages) {
  const answered = new Set(agent.messages.filter((m) => m.role === "tool").map((m) => m.toolCallId));
  const calls = newMessages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []));
  const ran = [];
  for (const call of calls) {
    if (call.function.name !== changeBackground.name || answered.has(call.id)) continue;
    const { color } = JSON.parse(call.function.arguments);
    agent.addMessage({ id: `tool-${call.id}`, role: "tool", toolCallId: call.id, content: JSON.stringify({ applied: color }) });
    ran.push(call.id);
  }
  return ran;
}

const say = (agent, text) => {
  agent.addMessage({ id: `u-${agent.messages.length}`, role: "user", content: text });
  return run(agent);
};

try {
  // The model calls the frontend tool: the run succeeds with the open call as the last message.
  const page = newAgent("ag-ui-frontend");
  const parked = await say(page, "make the background nicer");
  report("parked", parked);
  const ran = runFrontendTools(page, parked.newMessages);
  const answered = await run(page);
  report("answered", { ran, ...answered, message: answered.last?.content });

  // The same history again (a retried request): nothing new runs or is stored.
  const count = page.messages.length;
  const resent = await run(page);
  report("resent", { ...resent, added: page.messages.length - count });

  // A tool result and a new user message in one run (a frontend tool that asks for no follow-up).
  const later = newAgent("ag-ui-frontend-later");
  const open = await say(later, "background, please");
  runFrontendTools(later, open.newMessages);
  const both = await say(later, "tell me a story");
  const texts = later.messages.filter((m) => m.role === "assistant" && m.content).map((m) => m.content);
  report("tool-then-message", { ...both, texts });

  // A message that ignores the open call: the call gets its one (ignored) result, the new turn runs.
  const ignored = newAgent("ag-ui-frontend-ignored");
  await say(ignored, "change the background");
  report("ignored", await say(ignored, "tell me a story"));

  // History that contradicts the thread: refused, nothing stored.
  const edited = newAgent("ag-ui-frontend-edited");
  await say(edited, "tell me a story");
  edited.messages[0].content = "something I never said";
  report("contradicted", await say(edited, "and another"));

  // A frontend tool named like one of the app's tools: refused before anything runs.
  const clash = newAgent("ag-ui-frontend-clash");
  clash.addMessage({ id: "u-0", role: "user", content: "hello" });
  report("clash", await run(clash, { tools: [{ ...changeBackground, name: "guarded_echo" }] }));
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exit(1);
}
