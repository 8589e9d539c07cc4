// Cancels a running turn with eve 1.0's own client (npm package eve 1.0.1), unchanged.
//
// Usage: node drive_cancel.mjs <base-url> <bearer-token>
// The server's model never finishes a step for a message holding "slow": the turn runs until
// cancelled, from this client, once the message's delivery is consumed. Prints one JSON line per step as drive_client.mjs does; exits 1 on a failed check.
import assert from "node:assert/strict";
import { Client } from "eve/client";

const [baseUrl, token] = process.argv.slice(2);
const client = new Client({ baseUrl, auth: { bearer: token } });

function report(step, facts) {
  process.stdout.write(`${JSON.stringify({ step, ...facts })}\n`);
}

async function main() {
  const { session, delivery } = await client.sessions.create({ message: "a slow one" });
  const seen = [];
  let cancel;
  for await (const event of delivery.stream()) {
    seen.push(event.type);
    // The message is in the turn, whose model step never ends: stop it from here.
    if (event.type === "delivery.consumed" && cancel === undefined) cancel = await session.cancel();
  }
  assert.ok(cancel !== undefined, `the turn never consumed the message: ${seen.join(", ")}`);
  const stopped = await cancel.result();
  assert.equal(stopped.outcome, "applied");
  const result = await delivery.result();
  report("cancel-running", { types: seen, cancel: stopped.outcome, status: result.status, outcome: result.outcome });
  // The session takes the next message.
  const next = await (await session.send("tell me a story")).result();
  assert.equal(next.status, "completed");
  report("after-cancel", { status: next.status, reply: next.reply });
}

main().catch((error) => {
  report("failed", { error: String(error?.stack ?? error) });
  process.exit(1);
});
