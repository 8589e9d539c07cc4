// Checks eve-py's version-27 stream of one session against eve 1.0.1's own code, unchanged.
//
// Usage: node check_stream.mjs <v26.ndjson> <v27.ndjson>
// The first file is the session's stream as eve-py serves it to eve 0.80.1 (`/v26/eve/v1`), the
// second as it serves it to eve 1.0 (`/eve/v1`, transport records included). Prints one JSON
// report: every fact against eve's schemas (`schemaViolation`), every line through eve's
// lifecycle checker (`createStreamChecker`), and each line against what eve's own reader of
// version-26 history (`createV26HistoryReader`, which eve's server runs for older sessions) makes
// of the same stored event, ids compared by order of appearance. eve-py's documented additions
// (a stored text delta as a `content.delta` progress record; a control's own delivery) are left
// out of that comparison, and listed, and so are its extensions (`interaction.opened`'s
// `extensions`; `interaction.settled`'s `response.answeredBy`, `value`, `action`, `editedInput`).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createStreamChecker } from "eve/events";

const root = path.dirname(createRequire(import.meta.url).resolve("eve/package.json"));
const load = (file) => import(pathToFileURL(path.join(root, "dist/src", file)).href);
const { createV26HistoryReader } = await load("execution/v26-history.js");
const { schemaViolation } = await load("protocol/session-events/schemas.js");

const [v26File, v27File] = process.argv.slice(2);
const lines = (file) => readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
const stored = lines(v26File);
const served = lines(v27File).filter((record) => !("$eve" in record) || record.$eve === "position");

const ID_KEYS = new Set(["deliveryId", "runId", "partId", "responseId", "changeId"]);
function normalize(value, ids) {
  const rename = (id) => {
    if (!ids.has(id)) ids.set(id, `<${ids.size}>`);
    return ids.get(id);
  };
  if (Array.isArray(value)) return value.map((item) => normalize(item, ids));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => {
        const item = value[key];
        if (ID_KEYS.has(key) && typeof item === "string") return [key, rename(item)];
        if (key === "reply" && Array.isArray(item)) return [key, item.map(rename)];
        return [key, normalize(item, ids)];
      }),
  );
}

const controlDeliveries = new Set(
  served.flatMap((line) =>
    (line.facts ?? []).filter((f) => f.type === "delivery.admitted" && f.data.source?.control).map((f) => f.data.deliveryId),
  ),
);
function comparable(line) {
  if ("progress" in line) return { $eve: "position" };
  if ("$eve" in line) return { $eve: "position" };
  const facts = line.facts
    .filter((fact) => !controlDeliveries.has(fact.data.deliveryId))
    // A structured result: eve's reader of older sessions drops `result.completed`; eve-py knows it.
    .filter((fact) => !(fact.type === "content.completed" && fact.data.kind === "result"))
    .map((fact) => {
      let data = fact.data;
      if (data.cause?.deliveryId && controlDeliveries.has(data.cause.deliveryId)) {
        const { cause, ...rest } = data;
        data = rest;
      }
      if (fact.type === "interaction.opened" && "extensions" in data) {
        const { extensions, ...rest } = data;
        data = rest;
      }
      if (fact.type === "interaction.settled" && data.response) {
        const { answeredBy, value, action, editedInput, ...response } = data.response;
        data = { ...data, response: Object.keys(response).length ? response : undefined };
        if (data.response === undefined) delete data.response;
      }
      return { ...fact, data };
    });
  return facts.length === 0 ? { $eve: "position" } : { at: line.at, facts };
}

const schema = [];
const checker = [];
const differences = [];
const additions = [];
const check = createStreamChecker();
const reader = createV26HistoryReader();
const ours = new Map();
let cascading = false;
const theirs = new Map();
served.forEach((line, index) => {
  if ("facts" in line) {
    for (const fact of line.facts) {
      const problem = schemaViolation(fact, "fact");
      if (problem) schema.push({ line: index, problem });
    }
  }
  if ("progress" in line) {
    const problem = schemaViolation(line.progress, "progress");
    if (problem) schema.push({ line: index, problem });
    additions.push({ line: index, type: line.progress.type });
  }
  if ("facts" in line || "progress" in line) {
    for (const violation of check.check(line, index)) checker.push({ line: index, ...violation });
  }
  const eve = reader.read(stored[index], index) ?? { $eve: "position" };
  // A delivery that found nothing to act on (eve-py's `delivery.ignored`: a cancel with nothing to
  // stop, a stale answer) has no event in an older session, so eve's reader shows a position.
  const ignored = stored[index]?.type === "delivery.ignored";
  // Requests a cancel or a message ended without an answer: eve's reader of older sessions makes
  // them a delivery's responses; eve-py renders them as eve's live cascade does (withdrawn, or left
  // for the cancelled turn to settle `interrupted`), so from there to the turn's end the lines are
  // held to eve's schemas and lifecycle checker above, not to that reader.
  if (stored[index]?.type === "input.resolved" && (stored[index].data.resolutions ?? []).every((r) => !r.response)) {
    cascading = true;
  }
  const mine = JSON.stringify(normalize(ignored ? { $eve: "position" } : comparable(line), ours));
  const expected = JSON.stringify(normalize(comparable(eve), theirs));
  if (mine !== expected && !cascading) differences.push({ line: index, type: stored[index]?.type, mine, eve: expected });
  if (cascading && ["turn.cancelled", "turn.completed", "turn.failed"].includes(stored[index]?.type)) {
    cascading = false;
    ours.clear(); // the two renderings named different ids in between: number the rest afresh
    theirs.clear();
  }
});
process.stdout.write(
  `${JSON.stringify({
    lines: served.length,
    stored: stored.length,
    schema,
    checker,
    differences,
    additions,
    controls: [...controlDeliveries],
  })}\n`,
);
