// Drives `eve-py serve` with eve's own TypeScript client (npm package eve 0.80.1), unchanged.
//
// Usage: node drive_client.mjs <base-url> <bearer-token>
// Prints one JSON object per line: {"step": name, ...what eve's client reported}; exits 1 on the
// first failed check (its line has "error"). tests/eve_client/test_eve_client.py runs it and
// checks the report too.
//
// eve's `result().status` is the session's: "waiting" both when a turn parked on input requests
// and when it finished and the session waits for the next message (then `inputRequests` is
// empty); "completed" only once the session itself ended.
import assert from "node:assert/strict";
import { Client, isInputRequest, isInputResponse } from "eve/client";

const [host, token] = process.argv.slice(2);
const client = new Client({ host, auth: { bearer: token } });

function report(step, facts) {
  process.stdout.write(`${JSON.stringify({ step, ...facts })}\n`);
}

async function main() {
  const health = await client.health();
  assert.equal(health.status, "ready");
  report("health", { health });

  const info = await client.info();
  const tools = Object.fromEntries(info.tools.static.map((tool) => [tool.name, tool]));
  assert.equal(tools.ask_question.hasExecute, false);
  assert.equal(tools.guarded_echo.requiresApproval, true);
  report("info", { agent: info.agent.name, tools: Object.keys(tools).sort() });

  // A typed picker: create a session with a message, receive the request, answer it.
  const { session, response } = await client.sessions.create({ message: "help me pick a template" });
  const parked = await response.result();
  assert.equal(parked.status, "waiting");
  assert.equal(parked.inputRequests.length, 1);
  const [picker] = parked.inputRequests;
  assert.ok(isInputRequest(picker), "eve's validator accepts the typed picker request");
  assert.equal(picker.action.toolName, "ask_question");
  assert.equal(picker.display, "select");
  report("picker", {
    status: parked.status,
    requestId: picker.requestId,
    options: picker.options.map((option) => option.id),
    ui: picker.action.input.ui,
  });

  const answer = { requestId: picker.requestId, optionId: "tpl_blue" };
  assert.ok(isInputResponse(answer));
  const answered = await (await session.respond([answer])).result();
  assert.equal(answered.status, "waiting");
  assert.deepEqual(answered.inputRequests, []);
  assert.equal(answered.message, "Recorded your pick: tpl_blue.");
  const resolved = answered.events.find((event) => event.type === "input.resolved");
  assert.equal(resolved.data.resolutions[0].outcome, "answered");
  const note = answered.events.find((event) => event.type === "action.result");
  assert.equal(note.data.result.toolName, "note");
  report("answered", { status: answered.status, message: answered.message });

  // A follow-up message in the same session.
  const followUp = await (await session.send("hello again")).result();
  assert.equal(followUp.status, "waiting");
  assert.deepEqual(followUp.inputRequests, []);
  assert.match(followUp.message, /Try "help me pick a template"/);
  report("follow-up", { status: followUp.status, message: followUp.message });

  // An approval: approve runs the executor.
  const echo = await (await session.send("run the guarded echo")).result();
  assert.equal(echo.status, "waiting");
  const [approval] = echo.inputRequests;
  assert.ok(isInputRequest(approval), "eve's validator accepts the approval request");
  assert.equal(approval.kind, "tool-approval");
  assert.deepEqual(
    approval.options.map((option) => option.id),
    ["approve", "deny"],
  );
  const approved = await (await session.respond([{ requestId: approval.requestId, optionId: "approve" }])).result();
  assert.equal(approved.status, "waiting");
  assert.deepEqual(approved.inputRequests, []);
  assert.match(approved.message, /guarded-echo-ok-T4Q9/);
  report("approved", { status: approved.status, message: approved.message });

  // An approval denied with a reason: the executor never runs.
  const again = await (await session.send("run the guarded echo")).result();
  const [second] = again.inputRequests;
  const denied = await (
    await session.respond([{ requestId: second.requestId, optionId: "deny", text: "not today" }])
  ).result();
  assert.equal(denied.status, "waiting");
  assert.deepEqual(denied.inputRequests, []);
  assert.match(denied.message, /did not run: Tool execution was denied\. Reason: not today/);
  const rejected = denied.events.find((event) => event.type === "action.result");
  assert.equal(rejected.data.status, "rejected");
  report("denied", { status: denied.status, message: denied.message, resultStatus: rejected.data.status });

  // A batch answered partially: the approval is required, so the turn waits for it.
  const review = await (await session.send("review my page")).result();
  assert.equal(review.status, "waiting");
  assert.equal(review.inputRequests.length, 2);
  const question = review.inputRequests.find((request) => request.kind === "question");
  const gate = review.inputRequests.find((request) => request.kind === "tool-approval");
  const partial = await (await session.respond([{ requestId: question.requestId, optionId: "blue" }])).result();
  // The turn parks again on what is left; eve's client knows the batch from the earlier result.
  assert.equal(partial.status, "waiting");
  assert.deepEqual(
    partial.events.map((event) => event.type),
    ["input.resolved", "turn.waiting"],
  );
  assert.deepEqual(
    partial.events[0].data.resolutions.map((resolution) => [resolution.requestId, resolution.outcome]),
    [[question.requestId, "answered"]],
  );
  const finished = await (await session.respond([{ requestId: gate.requestId, optionId: "approve" }])).result();
  assert.equal(finished.status, "waiting");
  assert.deepEqual(finished.inputRequests, []);
  assert.match(finished.message, /Colour: blue/);
  report("batch", { partial: partial.status, message: finished.message });

  // A client tool answered with text (eve's client has no typed value: JSON in text).
  const picked = await (await session.send("help me pick a template")).result();
  const [textPicker] = picked.inputRequests;
  const byText = await (
    await session.respond([{ requestId: textPicker.requestId, text: '{"pickedIds":["tpl_green"]}' }])
  ).result();
  assert.equal(byText.message, "Recorded your pick: tpl_green.");
  report("text-answer", { message: byText.message });

  // Cancel a parked turn: its question is withdrawn, the session waits for the next message.
  const toCancel = await (await session.send("help me pick a template")).result();
  assert.equal(toCancel.status, "waiting");
  const cancelled = await session.cancel();
  assert.deepEqual(cancelled, { sessionId: session.state.sessionId, status: "accepted" });
  const tail = [];
  for await (const event of session.stream({ startIndex: -3 })) {
    tail.push(event.type);
    if (event.type === "session.waiting") break;
  }
  assert.deepEqual(tail, ["input.resolved", "turn.cancelled", "session.waiting"]);
  report("cancel", { cancelled, tail });

  // Text deltas, streamed as the model writes them.
  const streamed = await session.send("tell me a story");
  const deltas = [];
  let completed;
  for await (const event of streamed) {
    if (event.type === "message.appended") deltas.push(event.data.messageDelta);
    if (event.type === "message.completed") completed = event.data.message;
  }
  assert.ok(deltas.length >= 2, `expected several message.appended events, got ${deltas.length}`);
  assert.equal(deltas.join(""), completed);
  report("deltas", { deltas: deltas.length, message: completed });

  // Reconnect from a negative startIndex: the last events of the log, then live ones.
  const last = [];
  for await (const event of session.stream({ startIndex: -2 })) {
    last.push(event.type);
    if (event.type === "session.waiting") break;
  }
  assert.deepEqual(last, ["turn.completed", "session.waiting"]);
  const bounded = [];
  for await (const event of session.stream({ startIndex: 0, follow: false })) bounded.push(event.type);
  assert.equal(bounded[0], "session.started");
  report("reconnect", { last, bounded: bounded.length });

  // Structured output: outputSchema gives result.data; clientContext reaches the model.
  const schema = {
    type: "object",
    properties: { templates: { type: "array", items: { type: "string" } }, sawClientContext: { type: "boolean" } },
    required: ["templates", "sawClientContext"],
  };
  const structured = await (
    await session.send("the catalogue as json", { clientContext: { page: "/templates" }, outputSchema: schema })
  ).result();
  assert.equal(structured.status, "waiting");
  assert.deepEqual(structured.data, { templates: ["tpl_blue", "tpl_red", "tpl_green"], sawClientContext: true });
  report("output-schema", { status: structured.status, data: structured.data });

  // eve's error body, and its session_not_active for an unknown session.
  try {
    await client.sessions.attach("ses_unknown").send("hi");
    assert.fail("an unknown session must be refused");
  } catch (error) {
    assert.equal(error.status, 409);
    assert.equal(error.code, "session_not_active");
    report("errors", { status: error.status, code: error.code, message: error.message });
  }
}

main().catch((error) => {
  report("failed", { error: String(error?.stack ?? error) });
  process.exit(1);
});
