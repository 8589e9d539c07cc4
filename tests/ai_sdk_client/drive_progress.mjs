// The AI SDK's own chat client (ai 7: AbstractChat + DefaultChatTransport) sees a running tool's
// progress and log entry as data parts while the call runs. Usage: node drive_progress.mjs URL TOKEN GATE
// The approved echo waits until GATE exists: this script writes it once onData has had both reports.
import { writeFileSync } from "node:fs";
import { Chat } from "./chat.mjs";

const [url, token, gate] = process.argv.slice(2);
const report = (step, data) => console.log(JSON.stringify({ step, ...data }));

try {
  const seen = [];
  let outputBeforeGate;
  const chat = new Chat({
    url,
    token,
    id: "ai-sdk-progress",
    onData: (part) => {
      seen.push({ type: part.type, id: part.id, data: part.data });
      if (seen.length === 2) {
        // The progress and the log entry: the echo is still waiting for the gate.
        outputBeforeGate = chat.messages.at(-1).parts.some((p) => p.type === "tool-guarded_echo" && p.state === "output-available");
        writeFileSync(gate, "open");
      }
    },
  });
  await chat.sendMessage({ text: "run the guarded echo" });
  const [gated] = chat.reply.tools;
  const finished = chat.nextFinish();
  await chat.addToolApprovalResponse({ id: gated.approval.id, approved: true });
  await finished;
  const parts = chat.messages.at(-1).parts.filter((p) => p.type.startsWith("data-"));
  report("progress", { seen, outputBeforeGate, parts, text: chat.reply.text, status: chat.status, error: chat.error?.message });
  // The next message resends the history, data parts included: the server takes it as it is.
  await chat.sendMessage({ text: "tell me a story" });
  report("follow-up", { text: chat.reply.text, status: chat.status, error: chat.error?.message });
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exitCode = 1;
}
