// AG-UI's own client (@ag-ui/client HttpAgent, 1.0) sees a running tool's progress and log entry as
// an activity message while the call runs. Usage: node drive_progress.mjs URL TOKEN GATE
// The approved echo waits until GATE exists: this script writes it once it has seen the reports.
import { writeFileSync } from "node:fs";
import { HttpAgent } from "@ag-ui/client";

const [url, token, gate] = process.argv.slice(2);
const report = (step, data) => console.log(JSON.stringify({ step, ...data }));

try {
  const agent = new HttpAgent({ url: `${url}/ag-ui`, headers: { authorization: `Bearer ${token}` }, threadId: "ag-ui-progress" });
  agent.addMessage({ id: "u-1", role: "user", content: "run the guarded echo" });
  await agent.runAgent();
  const [approval] = agent.pendingInterrupts;
  const seen = [];
  let resultBeforeGate = false;
  const activity = () => agent.messages.filter((m) => m.role === "activity");
  await agent.runAgent(
    { resume: [{ interruptId: approval.id, status: "resolved", payload: { approved: true } }] },
    {
      onActivitySnapshotEvent: ({ event }) => {
        seen.push({ type: event.type, content: event.content });
      },
      onActivityDeltaEvent: ({ event }) => {
        seen.push({ type: event.type, patch: event.patch });
        // The log entry, after the first progress: the call is still waiting for the gate.
        if (seen.length === 2) {
          resultBeforeGate = agent.messages.some((m) => m.role === "tool");
          writeFileSync(gate, "open");
        }
      },
    },
  );
  report("progress", {
    seen,
    resultBeforeGate,
    activities: activity().map(({ id, activityType, content }) => ({ id, activityType, content })),
    message: agent.messages.filter((m) => m.role === "assistant" && m.content).at(-1)?.content,
  });
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exitCode = 1;
}
