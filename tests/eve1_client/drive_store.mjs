// Drives `eve-py serve` with eve 1.0's `SessionStore` (what `useEveAgent` runs in React, Vue and
// Svelte), from the npm package eve 1.0.1, unchanged.
//
// Usage: node drive_store.mjs <base-url> <bearer-token>
// Prints one JSON object per line, {"step": name, ...what the store's snapshot said}; exits 1 on
// the first failed check.
import assert from "node:assert/strict";
import { SessionStore } from "eve/client";
import { activeTurn, openInteractions, session } from "eve/events";

const [baseUrl, token] = process.argv.slice(2);

function report(step, facts) {
  process.stdout.write(`${JSON.stringify({ step, ...facts })}\n`);
}

// Resolves once `check()` holds for the store's snapshot.
function until(store, check, timeoutMs = 10_000) {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`the store never reached the expected state: ${JSON.stringify(store.snapshot.error ?? null)}`));
    }, timeoutMs);
    const stop = store.subscribe(() => {
      if (check()) {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  });
}

function texts(store) {
  return store.snapshot.messages.flatMap((message) =>
    message.parts.filter((part) => part.type === "text").map((part) => `${message.role}: ${part.text}`),
  );
}

function open(store) {
  return openInteractions(store.snapshot.view);
}

async function main() {
  const store = new SessionStore({ baseUrl, auth: { bearer: token } });
  const unobserve = store.observe();

  // The picker parks: the store shows the question as an open interaction of the tool's call.
  await store.send({ message: "help me pick a template" });
  await until(store, () => open(store).length === 1);
  assert.equal(store.snapshot.error, undefined);
  const [question] = open(store);
  const tool = store.snapshot.messages.flatMap((m) => m.parts).find((part) => part.type === "tool" || part.type === "interaction");
  report("picker", { interactions: open(store).length, part: tool?.type, messages: texts(store) });

  // Answer it; the reply renders and the interaction is gone.
  await store.send({ answers: [{ interactionId: question.interactionId, optionId: "tpl_red" }] });
  await until(store, () => texts(store).includes("assistant: Recorded your pick: tpl_red."));
  assert.equal(open(store).length, 0);
  report("answered", { messages: texts(store) });

  // An approval, then the Stop button (cancel) while it waits.
  await store.send({ message: "run the guarded echo" });
  await until(store, () => open(store).length === 1);
  assert.ok(activeTurn(store.snapshot.view) !== undefined);
  const stop = await store.cancel();
  const stopped = await stop.result();
  assert.equal(stopped.outcome, "applied");
  await until(store, () => activeTurn(store.snapshot.view) === undefined && open(store).length === 0);
  report("cancelled", { outcome: stopped.outcome, error: store.snapshot.error ?? null });

  // End the session: the store sees it ended.
  const end = await store.end();
  await end.result();
  await until(store, () => session(store.snapshot.view)?.status === "ended");
  assert.equal(store.snapshot.error, undefined);
  report("ended", { status: session(store.snapshot.view)?.status, events: store.snapshot.events.length });
  unobserve();
}

main().catch((error) => {
  report("failed", { error: String(error?.stack ?? error) });
  process.exit(1);
});
