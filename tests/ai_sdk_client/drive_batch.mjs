// One model step calls an approval-gated tool (guarded_echo), a typed picker (ask_question, a client
// tool) and a tool that runs at once (note): the AI SDK's own chat (ai 7: AbstractChat +
// DefaultChatTransport) answers the approval with addToolApprovalResponse and the picker with
// addToolOutput, and sends by itself only once both are answered. Usage: node drive_batch.mjs URL TOKEN
// Prints one JSON line per step ({"step": ...}); test_ai_sdk_batch.py checks them.
import { Chat } from "./chat.mjs";

const [url, token] = process.argv.slice(2);
const report = (step, data) => console.log(JSON.stringify({ step, ...data }));
const state = ({ type, toolCallId, state, output, approval }) => ({ type, toolCallId, state, output, approval });

try {
  // Counts the chat's requests: the half-answered batch must not be sent.
  let requests = 0;
  const chat = new Chat({ url, token, id: "ai-sdk-review", onRequest: () => (requests += 1) });
  await chat.sendMessage({ text: "review my page" });
  report("parked", { tools: chat.reply.tools.map(state), status: chat.status, requests });

  const gated = chat.reply.tools.find((t) => t.type === "tool-guarded_echo");
  const question = chat.reply.tools.find((t) => t.type === "tool-ask_question");
  await chat.addToolApprovalResponse({ id: gated.approval.id, approved: true });
  report("approved only", { tools: chat.reply.tools.map(state), status: chat.status, requests });

  const finished = chat.nextFinish();
  await chat.addToolOutput({ tool: "ask_question", toolCallId: question.toolCallId, output: { pickedIds: ["blue"] } });
  await finished;
  report("completed", {
    ...chat.reply,
    tools: chat.reply.tools.map(state),
    status: chat.status,
    error: chat.error?.message,
    requests,
  });
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exit(1);
}
