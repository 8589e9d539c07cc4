// The AI SDK's own chat client (ai 7: AbstractChat + DefaultChatTransport) drives eve-py serve's
// POST /ai-sdk/chat through the HITL flows of fixtures/agent-tools-hitl. Usage: node drive_chat.mjs URL TOKEN
// Prints one JSON line per step ({"step": ...}); test_ai_sdk_client.py checks them.
import { Chat } from "./chat.mjs";

const [url, token] = process.argv.slice(2);
const report = (step, data) => console.log(JSON.stringify({ step, ...data }));
const state = ({ type, state, output, approval, errorText, toolMetadata }) => ({
  type, state, output, approval, errorText, toolMetadata,
});

async function answer(chat, act) {
  const finished = chat.nextFinish();
  await act();
  await finished;
  return { ...chat.reply, status: chat.status, error: chat.error?.message };
}

try {
  // A typed picker: a client tool left open; addToolOutput answers it and the chat goes on by itself.
  const pick = new Chat({ url, token, id: "ai-sdk-pick" });
  await pick.sendMessage({ text: "help me pick a template" });
  const [question] = pick.reply.tools;
  report("parked", { question: state(question), status: pick.status });
  const picked = await answer(pick, () =>
    pick.addToolOutput({ tool: "ask_question", toolCallId: question.toolCallId, output: { pickedIds: ["tpl_green"] } }),
  );
  report("picked", { ...picked, tools: picked.tools.map(state) });

  // An approval: tool-approval-request, approved with addToolApprovalResponse; the call runs once.
  const echo = new Chat({ url, token, id: "ai-sdk-echo" });
  await echo.sendMessage({ text: "run the guarded echo" });
  const [gated] = echo.reply.tools;
  report("approval", { part: state(gated) });
  const approved = await answer(echo, () => echo.addToolApprovalResponse({ id: gated.approval.id, approved: true }));
  report("approved", { ...approved, tools: approved.tools.map(state) });

  // A follow-up message in the same chat: the server keeps the session, the resent history agrees.
  await echo.sendMessage({ text: "tell me a story" });
  report("follow-up", { ...echo.reply, status: echo.status, messages: echo.messages.length });

  // A denial, with its reason.
  const deny = new Chat({ url, token, id: "ai-sdk-deny" });
  await deny.sendMessage({ text: "run the guarded echo" });
  const [denied] = deny.reply.tools;
  const refusedRun = await answer(deny, () =>
    deny.addToolApprovalResponse({ id: denied.approval.id, approved: false, reason: "not today" }),
  );
  report("denied", { ...refusedRun, tools: refusedRun.tools.map(state) });

  // An output that fails the picker's schema: the server refuses it (422), stores nothing, and the
  // call stays open; a fitting output then completes the turn.
  const bad = new Chat({ url, token, id: "ai-sdk-bad" });
  await bad.sendMessage({ text: "help me pick a template" });
  const [badQuestion] = bad.reply.tools;
  const refused = await answer(bad, () =>
    bad.addToolOutput({ tool: "ask_question", toolCallId: badQuestion.toolCallId, output: { pickedIds: "tpl_red" } }),
  );
  const retried = await answer(bad, () =>
    bad.addToolOutput({ tool: "ask_question", toolCallId: badQuestion.toolCallId, output: { pickedIds: ["tpl_red"] } }),
  );
  report("refused", { refused: { status: refused.status, error: refused.error }, retried: retried.text });
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exit(1);
}
