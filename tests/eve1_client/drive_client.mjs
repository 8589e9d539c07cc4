// Drives `eve-py serve` with eve 1.0's own TypeScript client (npm package eve 1.0.1), unchanged.
//
// Usage: node drive_client.mjs <base-url> <bearer-token>
// Prints one JSON object per line: {"step": name, ...what eve's client reported}; exits 1 on the
// first failed check (its line has "error"). tests/eve1_client/test_eve1_client.py runs it and
// checks the report too.
import assert from "node:assert/strict";
import { Client, SessionNotActiveError } from "eve/client";

const [baseUrl, token] = process.argv.slice(2);
const client = new Client({ baseUrl, auth: { bearer: token } });

function report(step, facts) {
  process.stdout.write(`${JSON.stringify({ step, ...facts })}\n`);
}

function summary(result) {
  return {
    status: result.status,
    outcome: result.outcome,
    reply: result.reply,
    deliveryId: result.deliveryId,
    interactions: result.interactions.map((i) => ({
      interactionId: i.interactionId,
      kind: i.request.kind,
      prompt: i.request.prompt,
      options: (i.request.options ?? []).map((option) => option.id),
    })),
  };
}

async function collect(delivery) {
  const types = [];
  for await (const event of delivery.stream()) types.push(event.type);
  return types;
}

async function main() {
  const health = await client.health();
  assert.equal(health.status, "ready");
  report("health", { status: health.status });

  // The typed picker: create a session with a message; its delivery pauses on the question.
  const { session, delivery } = await client.sessions.create({ message: "help me pick a template" });
  const parked = await delivery.result();
  assert.equal(parked.status, "awaiting-input");
  assert.equal(parked.interactions.length, 1);
  const [picker] = parked.interactions;
  assert.equal(picker.request.kind, "question");
  report("picker", summary(parked));

  const answered = await (await session.respond([{ interactionId: picker.interactionId, optionId: "tpl_blue" }])).result();
  assert.equal(answered.status, "completed");
  assert.equal(answered.reply, "Recorded your pick: tpl_blue.");
  assert.deepEqual(answered.interactions, []);
  report("answered", summary(answered));

  // The same answer again (a second click): stale, so it is reported, not refused.
  const twice = await (await session.respond([{ interactionId: picker.interactionId, optionId: "tpl_red" }])).result();
  assert.equal(twice.outcome, "ignored");
  report("answered-again", { outcome: twice.outcome, status: twice.status });

  // The picker answered by text, as a person types it: an option's label picks it.
  const { session: typing, delivery: asks } = await client.sessions.create({ message: "help me pick a template" });
  const [typed] = (await asks.result()).interactions;
  const byText = await (await typing.respond([{ interactionId: typed.interactionId, text: "Green" }])).result();
  assert.equal(byText.reply, "Recorded your pick: tpl_green.");
  report("picker-text", summary(byText));

  // A follow-up on the same session, read through Delivery.stream().
  const followUp = await session.send("tell me a story");
  const types = await collect(followUp);
  assert.ok(types.includes("content.completed"));
  assert.equal(types.at(-1), "delivery.settled");
  const told = await followUp.result();
  assert.equal(told.status, "completed");
  assert.match(told.reply, /^Once upon a time/);
  report("follow-up", { ...summary(told), types });

  // A cancel with no turn to stop is a delivery too, settled `ignored`.
  const nothing = await session.cancel();
  const ignored = await nothing.result();
  assert.equal(ignored.outcome, "ignored");
  report("cancel-idle", { deliveryId: nothing.deliveryId, outcome: ignored.outcome });

  // Reconnecting from a position: a bounded read from the line after the picker's pause.
  const all = [];
  for await (const event of session.stream({ startIndex: 0, follow: false })) all.push(event);
  const line = all.find((event) => event.type === "turn.paused").meta.position.line;
  const rest = [];
  for await (const event of session.stream({ startIndex: line + 1, follow: false })) rest.push(event);
  assert.deepEqual(
    rest.map((event) => event.meta.position),
    all.filter((event) => event.meta.position.line > line).map((event) => event.meta.position),
  );
  report("reconnect", { from: line + 1, events: rest.length, first: rest[0].type });

  const snapshot = await session.snapshot();
  assert.equal(snapshot.events.length, all.length);
  report("snapshot", { events: snapshot.events.length, streamIndex: snapshot.session.streamIndex });

  // Approvals: approved, denied, and the editable one approved as asked.
  for (const [message, optionId, expected] of [
    ["run the guarded echo", "approve", /returned the token guarded-echo-ok/],
    ["run the guarded echo", "deny", /did not run/],
    ["send the newsletter", "approve", /^Sent 'Weekly news'/],
  ]) {
    const { session: approving, delivery: asked } = await client.sessions.create({ message });
    const waiting = await asked.result();
    assert.equal(waiting.status, "awaiting-input");
    const [approval] = waiting.interactions;
    assert.equal(approval.request.kind, "approval");
    const decided = await (await approving.respond([{ interactionId: approval.interactionId, optionId }])).result();
    assert.equal(decided.status, "completed");
    assert.match(decided.reply, expected);
    report(`approval-${message.split(" ").at(-1)}-${optionId}`, summary(decided));
  }

  // A batch of two questions, answered in one delivery.
  const { session: comparing, delivery: compare } = await client.sessions.create({ message: "compare two layouts" });
  const batch = await compare.result();
  assert.equal(batch.interactions.length, 2);
  const both = await (
    await comparing.respond([
      { interactionId: batch.interactions[0].interactionId, optionId: "tpl_red" },
      { interactionId: batch.interactions[1].interactionId, optionId: "blue" },
    ])
  ).result();
  assert.equal(both.status, "completed");
  report("batch", { asked: summary(batch), answered: summary(both) });

  // Cancel a parked turn: the cancel is a delivery of its own, applied.
  const { session: parking, delivery: parks } = await client.sessions.create({ message: "help me pick a template" });
  await parks.result();
  const cancel = await parking.cancel();
  const cancelled = await cancel.result();
  assert.equal(cancelled.outcome, "applied");
  report("cancel-parked", { deliveryId: cancel.deliveryId, status: cancelled.status, outcome: cancelled.outcome });

  // Clear, then end; a message after the end is refused as eve refuses it.
  const clear = await parking.clear();
  assert.equal((await clear.result()).outcome, "applied");
  const end = await parking.end({ reason: "done" });
  const ended = await end.result();
  assert.equal(ended.sessionEnded, true);
  await assert.rejects(parking.send("hello again"), SessionNotActiveError);
  report("end", { clear: clear.deliveryId, end: end.deliveryId, outcome: ended.outcome, sessionEnded: ended.sessionEnded });

  // A follower of an ended session stops at stream.ended instead of reconnecting.
  const followed = [];
  for await (const event of parking.stream({ startIndex: 0 })) followed.push(event.type);
  assert.equal(followed.at(-1), "session.ended");
  report("follower", { last: followed.at(-1), events: followed.length });

  // Prewarm a live session; an unknown session refuses messages and controls.
  assert.deepEqual(await session.prewarm(), { status: "ready" });
  const unknown = client.sessions.attach("ses_unknown");
  await assert.rejects(unknown.send("hi"), SessionNotActiveError);
  await assert.rejects(unknown.cancel(), SessionNotActiveError);
  report("unknown", { refused: true });
}

main().catch((error) => {
  report("failed", { error: String(error?.stack ?? error) });
  process.exit(1);
});
