// AG-UI's own client (@ag-ui/client HttpAgent, 1.0) keeps one thread going while the eve-py server
// behind its URL is restarted. Usage: node drive_restart.mjs URL TOKEN parked|killed|approved|message
// Prints one JSON line per step ({"step": ...}); on {"step": "restart"} the test restarts the server
// (same store, same URL) and writes a line to this script's stdin once the new one listens.
//
// parked: a run ends with an interrupt, the server stops, the same agent resumes on the new one.
// killed: the server is killed while the turn's slow tool runs (the run breaks off); the same agent
//         runs again on the new server and gets the rest of that turn, which the new server finishes.
// approved: the same, for a slow tool a resume approved (the retried run resends that resume).
// message: the same cut-off run, but the next run brings a new message: it gets the rest of the old
//          turn, then its own.
import { createInterface } from "node:readline";
import { HttpAgent } from "@ag-ui/client";

const [url, token, mode] = process.argv.slice(2);
const report = (step, data) => console.log(JSON.stringify({ step, ...data }));
const stdin = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
// A connection the server drops mid-stream also rejects a promise the client does not await (undici's
// body reader); a browser logs that, Node would exit: log it, as a browser does.
process.on("unhandledRejection", (reason) => console.error("unhandled rejection:", String(reason)));

async function restart() {
  report("restart", {});
  await stdin.next(); // the new server listens
}

async function run(agent, params = {}, extra = {}) {
  let finished;
  let error;
  const seen = [];
  try {
    await agent.runAgent(params, {
      onEvent: ({ event }) => {
        seen.push(event.type);
      },
      onRunFinishedEvent: ({ event }) => {
        finished = event;
      },
      onRunErrorEvent: ({ event }) => {
        error = event;
      },
      ...extra,
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
    seen,
  };
}

const MESSAGES = {
  parked: "help me pick a template",
  killed: "fetch the report",
  approved: "fetch the approved report",
  message: "fetch the report",
};

try {
  const threadId = `ag-ui-${mode}`;
  const agent = new HttpAgent({ url: `${url}/ag-ui`, headers: { authorization: `Bearer ${token}` }, threadId });
  agent.addMessage({ id: "u-1", role: "user", content: MESSAGES[mode] });
  if (mode === "parked") {
    const parked = await run(agent);
    report("parked", parked);
    await restart();
    const [question] = parked.interrupts;
    const resume = [{ interruptId: question.id, status: "resolved", payload: { pickedIds: ["tpl_red"] } }];
    report("resumed", await run(agent, { resume }));
  } else {
    // killed: the message's run breaks off; approved: the approving resume's run does.
    let params = {};
    if (mode === "approved") {
      const parked = await run(agent);
      report("parked", parked);
      params = { resume: parked.interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: { approved: true } })) };
    }
    let restarting;
    const broken = await run(agent, params, {
      onRunStartedEvent: () => {
        restarting = restart(); // the test kills the server under this run once the slow tool runs
      },
    });
    await restarting;
    report("broken", { ...broken, pending: agent.pendingInterrupts.length });
    if (mode === "message") {
      // The person moves on instead: a new message, while the new server has yet to finish the old turn.
      agent.addMessage({ id: "u-2", role: "user", content: "fetch it once more" });
      params = {};
    }
    report("again", await run(agent, params)); // the same run again, as a person retrying would
  }
  const tools = agent.messages.filter((m) => m.role === "tool").map((m) => m.content);
  report("thread", { tools, roles: agent.messages.map((m) => m.role) });
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exit(1);
}
process.exit(0);
