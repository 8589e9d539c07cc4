// eve-py browser chat: talks to the session API under /eve/v1 (vercel/eve 0.80.1's wire), follows
// the NDJSON event stream and renders input requests as widgets. No build step, no dependencies.
"use strict";

const API = "/eve/v1";

// A read of the stream stops at the first of these at or after the index it waits from.
const BOUNDARIES = new Set(["turn.waiting", "session.waiting", "session.failed", "session.completed"]);
// After these the session produces nothing more.
const TERMINAL = new Set(["session.failed", "session.completed"]);
// How long a message refused with 409 `session_not_ready` is sent again (eve's client: 20 s).
const SEND_RETRY_MS = 20_000;

const state = {
  token: sessionStorage.getItem("eve-token") || "",
  sessionId: null,
  ended: false, // the session was reset (`session.completed`): the next message starts a new one
  cursor: 0, // index of the next event of the session's log to read (every event line counts)
  boundaries: [], // indices of the boundary events read
  delivered: new Map(), // deliveryId -> index of the first event read that carries it
  terminal: false, // a session.failed/session.completed was read
  stream: null, // AbortController of the stream being read
  live: new Map(), // "turnId:stepIndex" -> assistant bubble being streamed
  batches: [], // open request batches
};

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// --- API ---------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headers(json) {
  const result = {};
  if (json) result["content-type"] = "application/json";
  if (state.token) result.authorization = `Bearer ${state.token}`;
  return result;
}

// eve's error body: {ok: false, error: "<text>", code: "<code>", requestId?, status?}.
function errorFrom(response, data) {
  const text = typeof data?.error === "string" && data.error ? data.error : response.statusText || `HTTP ${response.status}`;
  const error = new ApiError(response.status, data?.code || "http_error", text);
  if (data?.requestId) error.requestId = data.requestId;
  return error;
}

async function api(method, path, body) {
  const response = await fetch(API + path, {
    method,
    headers: headers(body !== undefined),
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    if (response.status === 401) askForToken();
    throw errorFrom(response, data);
  }
  return data;
}

// The server wants a token (a 401): show the token box, saying why when a token was refused.
function askForToken() {
  state.authFailed = true;
  const error = $("token-error");
  error.textContent = state.token ? "That token was not accepted; check it and try again." : "";
  error.hidden = !state.token;
  if (state.token) $("token-input").setAttribute("aria-invalid", "true");
  else $("token-input").removeAttribute("aria-invalid");
  $("token-form").hidden = false;
  $("token-input").focus();
}

// Try the token typed in the box on an authenticated route; keep it only once the server takes it.
async function useToken(token) {
  state.token = token;
  try {
    await api("GET", "/info");
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) setStatus("failed", error.message);
    return;
  }
  sessionStorage.setItem("eve-token", token);
  $("token-form").hidden = true;
  $("token-error").hidden = true;
  $("token-input").removeAttribute("aria-invalid");
  if (state.authFailed && $("status").dataset.status === "failed") setStatus("idle");
  state.authFailed = false;
  $("message").focus();
  if (state.sessionId) follow();
}

// --- transcript --------------------------------------------------------------------------------

function scrollDown() {
  const main = $("transcript");
  main.scrollTop = main.scrollHeight;
}

function add(node) {
  $("hint")?.remove();
  $("transcript").append(node);
  scrollDown();
  return node;
}

function setStatus(status, text) {
  const node = $("status");
  node.dataset.status = status;
  node.textContent = text ?? {
    idle: "",
    working: "The agent is working…",
    waiting: "The agent is waiting for your answer.",
    completed: "Done.",
    cancelled: "Stopped.",
    failed: "The turn failed.",
    ended: "This session has ended; your next message starts a new one.",
  }[status];
  const busy = status === "working";
  $("send").disabled = busy;
  // Stop cancels the running turn, or the parked one (its open questions are withdrawn).
  $("cancel").hidden = !(busy || status === "waiting");
}

function showSession() {
  $("session-label").textContent = state.sessionId ? `session ${state.sessionId}` : "";
}

function stepKey(data) {
  return `${data.turnId}:${data.stepIndex}`;
}

function dropLive(key) {
  state.live.get(key)?.remove();
  state.live.delete(key);
}

function handle(event) {
  const data = event.data || {};
  switch (event.type) {
    case "turn.started":
      setStatus("working");
      break;
    case "message.received": {
      const text = typeof data.message === "string"
        ? data.message
        : (data.parts || []).map((part) => part.text ?? "").join("\n");
      add(el("div", { class: "msg user", text }));
      break;
    }
    case "message.appended": {
      // A piece of the step's text as it streams; every piece is a stored event, so a
      // reconnected stream never sends one twice.
      if (!data.messageDelta) break;
      let bubble = state.live.get(stepKey(data));
      if (!bubble) {
        bubble = add(el("div", { class: "msg assistant streaming" }));
        state.live.set(stepKey(data), bubble);
      }
      bubble.textContent += data.messageDelta;
      scrollDown();
      break;
    }
    case "message.completed": {
      // The step's whole text: it replaces what streamed.
      const bubble = state.live.get(stepKey(data));
      state.live.delete(stepKey(data));
      if (!data.message) {
        bubble?.remove();
      } else if (bubble) {
        bubble.classList.remove("streaming");
        bubble.textContent = data.message;
      } else {
        add(el("div", { class: "msg assistant", text: data.message }));
      }
      break;
    }
    case "step.failed":
      dropLive(stepKey(data)); // its text never completed
      break;
    case "action.result": {
      // A tool's result in words: its output's fields as rows, a failure's message as text.
      const result = data.result || {};
      const failed = result.isError || (data.status && data.status !== "completed");
      const mark = data.status === "rejected" ? "⊘" : failed ? "✗" : "↳";
      const verb = data.status === "rejected" ? "did not run" : failed ? "failed" : "returned";
      add(el("div", { class: failed ? "tool error" : "tool", "data-status": data.status },
        el("span", { class: "tool-head", text: `${mark} ${result.toolName} ${verb}` }),
        valueView(result.output, `${result.toolName} result`)));
      break;
    }
    case "input.requested":
      addBatch(data);
      break;
    case "input.resolved":
      resolveRequests(data.resolutions || []);
      break;
    case "turn.waiting":
      setStatus("waiting");
      focusOpenRequest();
      break;
    case "result.completed":
      add(el("pre", { class: "result", "aria-label": "Result", text: JSON.stringify(data.result, null, 2) }));
      break;
    case "turn.completed":
      setStatus("completed");
      break;
    case "turn.failed":
      for (const key of [...state.live.keys()]) if (key.startsWith(`${data.turnId}:`)) dropLive(key);
      setStatus("failed", `The turn failed: ${data.message ?? "unknown error"}`);
      break;
    case "turn.cancelled":
      for (const bubble of state.live.values()) bubble.remove();
      state.live.clear();
      setStatus("cancelled");
      break;
    case "context.cleared":
      add(el("p", { class: "note muted", text: "The conversation history was cleared." }));
      break;
    case "session.waiting":
      // Ends every turn that ended (completed, failed or cancelled); their own events set the status.
      if ($("status").dataset.status === "working") setStatus("idle");
      break;
    case "session.failed":
      setStatus("failed", `The session failed: ${data.message ?? "unknown error"}`);
      break;
    case "session.completed":
      state.ended = true;
      for (const batch of [...state.batches]) closeBatch(batch, "The session ended.");
      setStatus("ended");
      break;
    default:
      break; // session.started, step.*, actions.requested, action.input.appended, newer types
  }
}

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
async function follow(until) {
  if (!state.sessionId) return;
  let from = until ? until.from ?? state.cursor : null;
  const deliveryId = until?.deliveryId ?? null;
  if (from !== null && reached(from, deliveryId)) return; // an earlier read got there already
  state.stream?.abort();
  const controller = new AbortController();
  state.stream = controller;
  const sessionId = state.sessionId;
  if (until) setStatus("working");
  let failures = 0;
  let before = null; // the status shown before "Reconnecting…"
  const done = () => {
    if (state.stream === controller) state.stream = null;
  };
  while (!controller.signal.aborted) {
    try {
      const params = new URLSearchParams({ startIndex: String(state.cursor) });
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
            return;
          }
        }
      }
      // The server ended the response before the boundary (nothing new for a while): go on
      // from the cursor, unless the session is settled and everything stored was read.
      if (await settled(sessionId)) {
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

// --- sessions ----------------------------------------------------------------------------------

function forgetSession() {
  state.stream?.abort();
  state.stream = null;
  state.sessionId = null;
  state.ended = false;
  state.cursor = 0;
  state.boundaries = [];
  state.delivered.clear();
  state.terminal = false;
  state.live.clear();
  state.batches = [];
  history.replaceState(null, "", location.pathname);
  showSession();
}

function newChat() {
  forgetSession();
  $("transcript").replaceChildren(el("p", { class: "hint muted", id: "hint", text: "New chat. Send a message to start." }));
  setStatus("idle");
  $("message").focus();
}

// POST a message; while the session's turn is still finishing (409 `session_not_ready`) send it
// again, backing off from 0.25 s to 2 s, for up to 20 s (as eve's client does).
async function postMessage(path, body) {
  const deadline = Date.now() + SEND_RETRY_MS;
  let delay = 250;
  for (;;) {
    try {
      return await api("POST", path, body);
    } catch (error) {
      const left = deadline - Date.now();
      if (!(error instanceof ApiError) || error.code !== "session_not_ready" || left <= 0) throw error;
      setStatus("working", "Waiting for the agent to finish…");
      await sleep(Math.min(delay, left));
      delay = Math.min(delay * 2, 2000);
    }
  }
}

async function sendMessage(text) {
  let accepted;
  if (!state.sessionId || state.ended) {
    accepted = await postMessage("/session", { message: text });
    forgetSession();
    state.sessionId = accepted.sessionId;
    history.replaceState(null, "", `#session=${encodeURIComponent(accepted.sessionId)}`);
    showSession();
  } else {
    const open = [...state.batches];
    for (const batch of open) batch.dismissed = true; // the message withdraws their open questions
    try {
      accepted = await postMessage(`/session/${encodeURIComponent(state.sessionId)}`, { message: text });
    } catch (error) {
      for (const batch of open) batch.dismissed = false;
      throw error;
    }
  }
  follow({ from: accepted.startIndex ?? state.cursor, deliveryId: accepted.deliveryId });
}

async function respond(responses) {
  const accepted = await api("POST", `/session/${encodeURIComponent(state.sessionId)}`, { inputResponses: responses });
  follow({ from: accepted.startIndex ?? state.cursor });
}

// --- input requests ----------------------------------------------------------------------------

// eve-py's request: eve's InputRequest with `kind`, `display` and `schema` taken from
// `input.requested`'s `extensions[requestId]` when there is one (client tools, elicitations,
// forms, typed pickers).
function mergeRequest(request, extension) {
  const merged = { ...request };
  if (extension) {
    merged.kind = extension.kind ?? merged.kind;
    merged.display = extension.display ?? merged.display;
    if (extension.schema) merged.schema = extension.schema;
  } else {
    merged.kind = request.kind === "tool-approval" ? "tool-approval" : "question"; // session-limit: a question
  }
  merged.display ??= request.options?.length ? "select" : "text";
  return merged;
}

const OUTCOMES = {
  answered: "✓ answered",
  approved: "✓ approved",
  denied: "✗ denied",
  ignored: "skipped",
  cancelled: "withdrawn: the turn was stopped",
  invalid: "✗ not accepted",
};

// A batch holds one card per request. In a batch of several, a card's own buttons only mark it
// ready; "Send answers" sends what every open card shows at that moment (a ticked box is sent
// even if its card's Submit was never pressed), or refuses, saying why on the card.
function addBatch(data) {
  for (const old of state.batches) closeBatch(old, "Replaced by a newer question.");
  const extensions = data.extensions || {};
  const requests = (data.requests || []).map((request) => mergeRequest(request, extensions[request.requestId]));
  const node = el("section", { class: "batch", "aria-label": "The agent needs your input" });
  const batch = {
    turnId: data.turnId,
    stepIndex: data.stepIndex,
    node,
    cards: new Map(), // requestId -> card (see renderRequest)
    sent: new Set(), // requestIds whose answer the server accepted (resolution not read yet)
    outcomes: new Map(), // requestId -> outcome of its resolution (the request is closed)
  };
  const single = requests.length === 1;
  const error = el("p", { class: "error-text", role: "alert", hidden: true });
  batch.error = error;
  batch.submit = async (responses) => {
    error.hidden = true;
    setControls(batch, false);
    try {
      await respond(responses);
      for (const response of responses) {
        batch.sent.add(response.requestId);
        const card = batch.cards.get(response.requestId);
        if (card && !batch.outcomes.has(response.requestId)) card.status.textContent = "✓ sent";
      }
    } catch (failure) {
      error.textContent = `Not sent: ${failure.message}`;
      error.hidden = false;
    }
    refreshControls(batch);
  };
  for (const request of requests) {
    const answer = (response) => {
      if (single) return batch.submit([response]);
      const card = batch.cards.get(request.requestId);
      card.status.textContent = !response ? "" : response.action === "decline" ? "will be skipped" : "✓ ready to send";
      return undefined;
    };
    const card = renderRequest(request, answer, single);
    batch.cards.set(request.requestId, card);
    node.append(card.node);
  }
  batch.sendAll = el("button", { type: "button", class: "primary", text: "Send answers", onclick: () => sendAll(batch) });
  if (!single) {
    node.append(el("div", { class: "row send-all" }, batch.sendAll,
      el("small", { class: "muted", text: "Questions you leave unanswered are skipped." })));
  }
  node.append(error);
  state.batches.push(batch);
  add(node);
}

function openCards(batch) {
  return [...batch.cards.entries()]
    .filter(([requestId]) => !batch.outcomes.has(requestId) && !batch.sent.has(requestId))
    .map(([, card]) => card);
}

function sendAll(batch) {
  const responses = [];
  const broken = [];
  for (const card of openCards(batch)) {
    const got = card.read(false);
    if (got.error) broken.push(card);
    else if (got.response) responses.push(got.response);
  }
  if (broken.length) {
    batch.error.textContent = broken.length === 1
      ? `Not sent: “${broken[0].request.prompt}” shows an answer that cannot be sent; see the note there.`
      : `Not sent: ${broken.length} questions show answers that cannot be sent; see the notes there.`;
    batch.error.hidden = false;
    broken[0].node.querySelector('[aria-invalid="true"]')?.focus(); // the first answer to fix
    return undefined;
  }
  if (!responses.length) {
    batch.error.textContent = "Nothing to send yet: answer at least one question.";
    batch.error.hidden = false;
    return undefined;
  }
  return batch.submit(responses);
}

function setControls(batch, enabled) {
  for (const control of batch.node.querySelectorAll("button, input, select, textarea")) control.disabled = !enabled;
}

// Controls of requests still open are enabled; those answered, sent or closed are not.
function refreshControls(batch) {
  if (batch.closed) return setControls(batch, false);
  for (const [requestId, card] of batch.cards) {
    const open = !batch.outcomes.has(requestId) && !batch.sent.has(requestId);
    for (const control of card.node.querySelectorAll("button, input, select, textarea")) control.disabled = !open;
  }
  batch.sendAll.disabled = openCards(batch).length === 0;
  return undefined;
}

// Focus the first control of the newest open request, so the keyboard answers it at once.
function focusOpenRequest() {
  const batch = state.batches[state.batches.length - 1];
  if (!batch || batch.closed || batch.node.contains(document.activeElement)) return;
  openCards(batch)[0]?.focus();
}

function closeBatch(batch, note) {
  if (batch.closed) return;
  batch.closed = true;
  setControls(batch, false);
  batch.node.classList.add("closed");
  batch.node.append(el("p", { class: "answered", text: note }));
  state.batches = state.batches.filter((b) => b !== batch);
}

// `input.resolved`: each resolved request is closed and says what was chosen; a batch closes once
// all of its are.
function resolveRequests(resolutions) {
  for (const resolution of resolutions) {
    for (const batch of state.batches) {
      const card = batch.cards.get(resolution.requestId);
      if (!card) continue;
      batch.outcomes.set(resolution.requestId, resolution.outcome);
      batch.sent.delete(resolution.requestId);
      card.node.dataset.outcome = resolution.outcome;
      const chosen = describeAnswer(card.request, resolution.response);
      const outcome = OUTCOMES[resolution.outcome] ?? resolution.outcome;
      card.status.textContent = chosen ? `${outcome}: ${chosen}` : outcome;
      card.showError("");
    }
  }
  for (const batch of [...state.batches]) {
    if (batch.outcomes.size < batch.cards.size) {
      refreshControls(batch);
      continue;
    }
    const outcomes = [...batch.outcomes.values()];
    if (outcomes.every((outcome) => outcome === "cancelled")) {
      closeBatch(batch, "Withdrawn: the turn was stopped.");
    } else if (outcomes.every((outcome) => outcome === "ignored")) {
      closeBatch(batch, batch.dismissed ? "Skipped: a new message was sent instead." : "Skipped.");
    } else {
      closeBatch(batch, "Answered.");
    }
  }
}

// --- wiring ------------------------------------------------------------------------------------

async function start() {
  $("composer").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("message").value.trim();
    if (!text) return;
    try {
      await sendMessage(text);
      $("message").value = "";
    } catch (error) {
      setStatus("failed", error.message);
    }
  });
  $("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("cancel").addEventListener("click", async () => {
    if (!state.sessionId) return;
    // A parked turn is cancelled too (its open requests resolve as cancelled, then turn.cancelled
    // and session.waiting), but nothing reads the stream while it waits: read them then. A
    // running turn's read is under way and sees its cancellation.
    const parked = $("status").dataset.status === "waiting" ? state.cursor : null;
    try {
      const answer = await api("POST", `/session/${encodeURIComponent(state.sessionId)}/cancel`, {});
      if (answer.status === "accepted" && parked !== null) follow({ from: parked });
    } catch (error) {
      setStatus("failed", error.message);
    }
  });
  $("new-chat").addEventListener("click", newChat);
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("token-input").value.trim();
    if (token) useToken(token);
  });

  try {
    // eve's health: {ok: true, status: "ready", workflowId}; eve-py's workflowId is "eve-py:<agent>".
    const health = await api("GET", "/health");
    const workflow = typeof health.workflowId === "string" ? health.workflowId : "";
    $("agent-name").textContent = workflow.replace(/^eve-py:/, "");
  } catch (error) {
    setStatus("failed", `The server does not answer: ${error.message}`);
  }
  try {
    await api("GET", "/info"); // a server that wants a token says so now (the token box shows), not after a send
  } catch {
    // a 401 showed the token box; anything else shows when the person sends
  }
  const match = /session=([^&]+)/.exec(location.hash);
  if (match) {
    state.sessionId = decodeURIComponent(match[1]);
    showSession();
    follow();
  }
}

start();
