// eve-py browser chat: following a session's NDJSON event stream (eve's wire) from a cursor, up to
// a turn's boundary, reconnecting when the server ends a response. Loaded before chat.js, which
// owns the state, the transcript and `handle(event)`.
"use strict";

// A read of the stream stops at the first of these at or after the index it waits from.
const BOUNDARIES = new Set(["turn.waiting", "session.waiting", "session.failed", "session.completed"]);
// After these the session produces nothing more.
const TERMINAL = new Set(["session.failed", "session.completed"]);

// --- the stream --------------------------------------------------------------------------------

// Whether the events read so far hold a boundary at index `from` or later, after the first event
// of the turn carrying `deliveryId` (when given), or a terminal event.
function reached(from, deliveryId) {
  if (state.terminal) return true;
  const own = deliveryId ? state.delivered.get(deliveryId) : 0;
  if (own === undefined) return false;
  return state.boundaries.some((index) => index >= from && index >= own);
}

// Reads the session's log from `state.cursor` and follows it live until a boundary
// (`turn.waiting`, `session.waiting`, or a terminal `session.failed`/`session.completed`):
// - `until` {from, deliveryId?}: the first boundary at index `from` or later (of the turn that
//   carries `deliveryId` in `meta.deliveryIds`, when given);
// - no `until`: the first boundary at the log's tail or later (replaying what is stored).
// The server ends a response after a quiet spell; the read then reconnects from its cursor.
// - `until.watch`: a read that waits, quietly, while the session waits for an answer, so an
//   answer given elsewhere (an answer link, another tab, AG-UI) shows here as it happens.
// A read that stops at `turn.waiting` goes on watching this way until this page answers.
async function follow(until) {
  if (!state.sessionId) return;
  let from = until ? until.from ?? state.cursor : null;
  const deliveryId = until?.deliveryId ?? null;
  if (from !== null && reached(from, deliveryId)) return; // an earlier read got there already
  state.stream?.abort();
  const controller = new AbortController();
  state.stream = controller;
  const sessionId = state.sessionId;
  const watching = Boolean(until?.watch);
  if (until && !watching) setStatus("working");
  let failures = 0;
  let before = null; // the status shown before "Reconnecting…"
  const done = () => {
    if (state.stream === controller) state.stream = null;
  };
  while (!controller.signal.aborted) {
    try {
      // live=1: running tools' reports as they happen, as records outside the cursor (activity.js).
      const params = new URLSearchParams({ startIndex: String(state.cursor), live: "1" });
      if (from === null) params.set("includeTailIndex", "1");
      const response = await fetch(
        `${API}/session/${encodeURIComponent(sessionId)}/stream?${params}`,
        { headers: headers(false), signal: controller.signal },
      );
      if (controller.signal.aborted) return;
      if (!response.ok) {
        const data = await response.json().catch(() => ({}));
        if (response.status === 401) askForToken();
        if (response.status === 404) forgetSession();
        setStatus("failed", errorFrom(response, data).message);
        done();
        return;
      }
      const start = Number.parseInt(response.headers.get("x-eve-start-index") ?? "", 10);
      if (Number.isInteger(start) && start >= 0) state.cursor = start;
      if (from === null) {
        const tail = Number.parseInt(response.headers.get("x-eve-stream-tail-index") ?? "", 10);
        from = Number.isInteger(tail) ? Math.max(tail, 0) : state.cursor;
      }
      if (before !== null) {
        setStatus(...before);
        before = null;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (controller.signal.aborted) return;
        if (ended) break;
        buffer += decoder.decode(value, { stream: true });
        let newline;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (!line.trim()) continue;
          const event = JSON.parse(line);
          if (event.$evePy === "live") {
            showReport(event.event); // a running tool's report; its stored copy comes later
            continue;
          }
          if (typeof event.$eve === "string") continue; // a transport record, not an event
          const index = state.cursor;
          state.cursor += 1;
          failures = 0;
          for (const id of event.meta?.deliveryIds || []) if (!state.delivered.has(id)) state.delivered.set(id, index);
          if (BOUNDARIES.has(event.type)) state.boundaries.push(index);
          if (TERMINAL.has(event.type)) state.terminal = true;
          handle(event);
          if (reached(from, deliveryId)) {
            controller.abort(); // stop reading: the server would keep the response open
            done();
            if (event.type === "turn.waiting" && !state.terminal) follow({ from: state.cursor, watch: true });
            return;
          }
        }
      }
      // The server ended the response before the boundary (nothing new for a while): go on
      // from the cursor, unless the session is settled and everything stored was read.
      if ((await settled(sessionId)) && !(watching && $("status").dataset.status === "waiting")) {
        done();
        return;
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      failures += 1;
      if (failures > 5) {
        setStatus("failed", `Lost the connection: ${error.message}`);
        done();
        return;
      }
      if (before === null) before = [$("status").dataset.status, $("status").textContent];
      setStatus("working", "Reconnecting…");
      await sleep(250 * failures);
    }
  }
}

// Whether the session runs nothing and its log holds nothing past the cursor (so no boundary
// is coming); shows its status then.
async function settled(sessionId) {
  let session;
  try {
    session = await api("GET", `/session/${encodeURIComponent(sessionId)}`);
  } catch {
    return false;
  }
  if (session.status === "running" || state.cursor < (session.eventCount ?? 0)) return false;
  if (session.status === "waiting") setStatus("waiting");
  else if (session.status === "ended") setStatus("ended");
  else if ($("status").dataset.status === "working") setStatus("idle");
  return true;
}
