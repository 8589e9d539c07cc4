// Drives `eve-py serve` with eve's `EveAgentStore` (what `useEveAgent` runs in React, Vue and
// Svelte), from the npm package eve 0.80.1, unchanged.
//
// Usage: node drive_store.mjs <base-url> <bearer-token>
// Prints one JSON object per line, {"step": name, ...what the store's snapshot said}; exits 1 on
// the first failed check.
import assert from "node:assert/strict";
import { EveAgentStore, defaultMessageReducer, isInputRequest, openConversationInputs } from "eve/client";

const [host, token] = process.argv.slice(2);

function report(step, facts) {
  process.stdout.write(`${JSON.stringify({ step, ...facts })}\n`);
}

function openRequests(store) {
  return openConversationInputs(store.snapshot.conversation).map((input) => input.request);
}

// Resolves once `check()` holds for the store's snapshot (the store still follows the open turn).
function until(store, check, timeoutMs = 10_000) {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the store never reached the expected state")), timeoutMs);
    const stop = store.subscribe(() => {
      if (check()) {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  });
}

function lastText(store) {
  const completed = store.snapshot.events.filter((event) => event.type === "message.completed");
  return completed.at(-1)?.data.message;
}

async function main() {
  const store = new EveAgentStore({ host, auth: { bearer: token }, reducer: defaultMessageReducer(), followIdle: false });
  const statuses = new Set();
  store.subscribe(() => statuses.add(store.snapshot.status));

  // The typed picker parks: the store shows one open request, and its turn open but waiting
  // (eve keeps a parked turn active: the store's status stays "streaming" until it ends).
  await store.send({ message: "help me pick a template" });
  assert.equal(store.snapshot.error, undefined);
  const turn = store.snapshot.conversation.turns[store.snapshot.conversation.activeTurnId];
  assert.equal(turn.status, "active");
  assert.equal(turn.waiting, true);
  const [picker] = openRequests(store);
  assert.ok(isInputRequest(picker));
  assert.equal(picker.action.toolName, "ask_question");
  const sessionId = store.snapshot.session.sessionId;
  report("picker", { sessionId, status: store.snapshot.status, open: [picker.requestId] });

  // Answering it settles the input and completes the turn.
  await store.send({ inputResponses: [{ requestId: picker.requestId, optionId: "tpl_red" }] });
  assert.equal(store.snapshot.error, undefined);
  assert.deepEqual(openRequests(store), []);
  const input = store.snapshot.conversation.inputs[picker.requestId];
  assert.equal(input.status, "settled");
  assert.equal(input.outcome, "answered");
  assert.equal(lastText(store), "Recorded your pick: tpl_red.");
  assert.equal(store.snapshot.status, "ready");
  assert.equal(store.snapshot.conversation.turns[turn.turnId].status, "completed");
  report("answered", { outcome: input.outcome, message: lastText(store) });

  // A follow-up message in the same session.
  await store.send({ message: "run the guarded echo" });
  assert.equal(store.snapshot.session.sessionId, sessionId);
  const [approval] = openRequests(store);
  assert.equal(approval.kind, "tool-approval");
  await store.send({ inputResponses: [{ requestId: approval.requestId, optionId: "deny", text: "no thanks" }] });
  const denial = store.snapshot.conversation.inputs[approval.requestId];
  assert.equal(denial.outcome, "denied");
  assert.match(lastText(store), /denied\. Reason: no thanks/);
  report("denied", { outcome: denial.outcome, message: lastText(store) });

  // A batch answered partially: the store keeps the approval open, then approving settles it.
  await store.send({ message: "review my page" });
  const batch = openRequests(store);
  assert.equal(batch.length, 2);
  const question = batch.find((request) => request.kind === "question");
  const gate = batch.find((request) => request.kind === "tool-approval");
  await store.send({ inputResponses: [{ requestId: question.requestId, optionId: "red" }] });
  assert.deepEqual(
    openRequests(store).map((request) => request.requestId),
    [gate.requestId],
  );
  await store.send({ inputResponses: [{ requestId: gate.requestId, optionId: "approve" }] });
  assert.deepEqual(openRequests(store), []);
  assert.equal(store.snapshot.conversation.inputs[gate.requestId].outcome, "approved");
  assert.match(lastText(store), /Colour: red/);
  report("batch", { message: lastText(store) });

  // Cancel a parked turn: the store sees the question withdrawn and the turn cancelled.
  await store.send({ message: "help me pick a template" });
  const [parked] = openRequests(store);
  const turnId = store.snapshot.events.findLast((event) => event.type === "turn.started").data.turnId;
  const cancelled = await store.cancel();
  assert.equal(cancelled.status, "accepted");
  await until(store, () => store.snapshot.events.some((event) => event.type === "turn.cancelled"));
  assert.equal(store.snapshot.conversation.inputs[parked.requestId].outcome, "cancelled");
  assert.equal(store.snapshot.conversation.turns[turnId].status, "cancelled");
  assert.deepEqual(openRequests(store), []);
  report("cancel", { turn: store.snapshot.conversation.turns[turnId].status });

  // Streamed text: the store's messages grow as deltas arrive.
  await store.send({ message: "tell me a story" });
  const appended = store.snapshot.events.filter((event) => event.type === "message.appended");
  assert.ok(appended.length >= 2);
  assert.match(lastText(store), /^Once upon a time/);
  report("deltas", { appended: appended.length, statuses: [...statuses].sort() });

  store.reset();
}

main()
  .then(() => process.exit(0))
  .catch((error) => {
    report("failed", { error: String(error?.stack ?? error) });
    process.exit(1);
  });
