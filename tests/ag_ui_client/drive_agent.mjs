// AG-UI's own client (@ag-ui/client HttpAgent, 1.0) drives eve-py serve's POST /ag-ui through the
// HITL flows of fixtures/agent-tools-hitl. Usage: node drive_agent.mjs URL TOKEN
// Prints one JSON line per step ({"step": ...}); test_ag_ui_client.py checks them.
import { HttpAgent } from "@ag-ui/client";

const [url, token] = process.argv.slice(2);
const report = (step, data) => console.log(JSON.stringify({ step, ...data }));

function newAgent(threadId) {
  return new HttpAgent({ url: `${url}/ag-ui`, headers: { authorization: `Bearer ${token}` }, threadId });
}

async function run(agent, params = {}) {
  let finished;
  let error;
  try {
    await agent.runAgent(params, {
      onRunFinishedEvent: ({ event }) => {
        finished = event;
      },
      onRunErrorEvent: ({ event }) => {
        error = event;
      },
    });
  } catch (thrown) {
    error = error ?? { message: String(thrown) };
  }
  const assistant = agent.messages.filter((m) => m.role === "assistant" && m.content);
  return {
    outcome: finished?.outcome?.type ?? (finished ? "success" : undefined),
    interrupts: agent.pendingInterrupts,
    message: assistant.at(-1)?.content,
    error: error ? { message: error.message, code: error.code } : undefined,
  };
}

async function say(agent, text) {
  agent.addMessage({ id: `u-${agent.messages.length}`, role: "user", content: text });
  return run(agent);
}

const resolved = (interrupt, payload) => ({ interruptId: interrupt.id, status: "resolved", payload });

try {
  // An approval: the run ends with an interrupt, a resume approves it, the run completes.
  const echo = newAgent("ag-ui-echo");
  const parked = await say(echo, "run the guarded echo");
  report("parked", parked);
  const [approval] = parked.interrupts;
  const toolCalls = echo.messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.function.name);
  report("approved", { ...(await run(echo, { resume: [resolved(approval, { approved: true })] })), toolCalls });
  const results = echo.messages.filter((m) => m.role === "tool").map((m) => JSON.parse(m.content));
  report("results", { results });

  // A follow-up message on the same thread: the session goes on.
  report("follow-up", await say(echo, "tell me a story"));

  // A denial, with its reason.
  const deny = newAgent("ag-ui-deny");
  const [denied] = (await say(deny, "run the guarded echo")).interrupts;
  report("denied", await run(deny, { resume: [resolved(denied, { approved: false, reason: "not today" })] }));

  // An editable approval: approved with edited arguments.
  const news = newAgent("ag-ui-news");
  const [edit] = (await say(news, "send the newsletter")).interrupts;
  const edited = { approved: true, editedArgs: { to: "news@example.org", subject: "Monthly news" } };
  report("edited", { schema: edit.responseSchema, ...(await run(news, { resume: [resolved(edit, edited)] })) });

  // A typed picker: the answer is its schema's value.
  const pick = newAgent("ag-ui-pick");
  const [question] = (await say(pick, "help me pick a template")).interrupts;
  report("picked", { interrupt: question, ...(await run(pick, { resume: [resolved(question, { pickedIds: ["tpl_green"] })] })) });

  // Two interrupts in one run, both answered by one resume.
  const review = newAgent("ag-ui-review");
  const both = (await say(review, "review my page")).interrupts;
  const answers = both.map((i) => resolved(i, i.reason === "tool_call" ? { approved: true } : { pickedIds: ["red"] }));
  report("batch", { reasons: both.map((i) => i.reason), ...(await run(review, { resume: answers })) });

  // A payload that does not fit: RUN_ERROR with eve-py's code; the interrupt is still there to answer.
  const bad = newAgent("ag-ui-bad");
  const [badOne] = (await say(bad, "run the guarded echo")).interrupts;
  const refused = await run(bad, { resume: [resolved(badOne, { approved: "yes" })] });
  bad.pendingInterrupts = [badOne]; // a failed run leaves the interrupt open on the server
  const retried = await run(bad, { resume: [resolved(badOne, { approved: true })] });
  report("refused", { refused: refused.error, retried: retried.message });
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exit(1);
}
