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

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

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

function askForToken() {
  $("token-form").hidden = false;
  $("token-input").focus();
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
      const result = data.result || {};
      const failed = result.isError || (data.status && data.status !== "completed");
      const mark = data.status === "rejected" ? "⊘" : failed ? "✗" : "↳";
      add(el("div", {
        class: failed ? "tool error" : "tool",
        "data-status": data.status,
        text: `${mark} ${result.toolName}: ${JSON.stringify(result.output)}`,
      }));
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

// For a request with options and a schema holding exactly one required string or string-array
// field (a typed picker such as {pickedIds: [...]}): [field, many]. Otherwise null.
function pickField(request) {
  const schema = request.schema;
  if (!request.options?.length || !schema || schema.type !== "object") return null;
  const required = schema.required || [];
  const properties = schema.properties || {};
  if (required.length !== 1 || !(required[0] in properties)) return null;
  const spec = properties[required[0]];
  if (spec.type === "string") return [required[0], false];
  if (spec.type === "array" && spec.items?.type === "string") return [required[0], spec.maxItems !== 1];
  return null;
}

const FLAT_TYPES = new Set(["string", "number", "integer", "boolean"]);

function isFlat(schema) {
  if (!schema || schema.type !== "object" || !schema.properties) return false;
  return Object.values(schema.properties).every((spec) => Array.isArray(spec.enum) || FLAT_TYPES.has(spec.type));
}

const OUTCOMES = {
  answered: "✓ answered",
  approved: "✓ approved",
  denied: "✗ denied",
  ignored: "skipped",
  cancelled: "withdrawn: the turn was stopped",
  invalid: "✗ not accepted",
};

function addBatch(data) {
  for (const old of state.batches) closeBatch(old, "Replaced by a newer question.");
  const extensions = data.extensions || {};
  const requests = (data.requests || []).map((request) => mergeRequest(request, extensions[request.requestId]));
  const node = el("section", { class: "batch", "aria-label": "The agent needs your input" });
  const batch = {
    turnId: data.turnId,
    stepIndex: data.stepIndex,
    node,
    cards: new Map(), // requestId -> its fieldset
    staged: new Map(), // requestId -> answer kept for "Send answers"
    sent: new Set(), // requestIds whose answer the server accepted (resolution not read yet)
    outcomes: new Map(), // requestId -> outcome of its resolution (the request is closed)
  };
  const single = requests.length === 1;
  const error = el("p", { class: "error-text", role: "alert", hidden: true });
  batch.submit = async (responses) => {
    error.hidden = true;
    setControls(batch, false);
    try {
      await respond(responses);
      for (const response of responses) {
        batch.staged.delete(response.requestId);
        batch.sent.add(response.requestId);
        const card = batch.cards.get(response.requestId);
        if (card && !batch.outcomes.has(response.requestId)) card.querySelector(".staged").textContent = "✓ sent";
      }
    } catch (failure) {
      error.textContent = failure.message;
      error.hidden = false;
    }
    refreshControls(batch);
  };
  for (const request of requests) {
    const answer = (response) => {
      if (single) return batch.submit([response]);
      batch.staged.set(request.requestId, response);
      batch.cards.get(request.requestId).querySelector(".staged").textContent = "✓ ready to send";
      refreshControls(batch);
      return undefined;
    };
    const card = renderRequest(request, answer);
    card.append(el("span", { class: "staged" }));
    batch.cards.set(request.requestId, card);
    node.append(card);
  }
  batch.sendAll = el("button", {
    type: "button",
    class: "primary",
    text: "Send answers",
    disabled: true,
    onclick: () => batch.submit([...batch.staged.values()]),
  });
  if (!single) {
    node.append(el("div", { class: "row send-all" }, batch.sendAll,
      el("small", { class: "muted", text: "Questions you leave unanswered are skipped." })));
  }
  node.append(error);
  state.batches.push(batch);
  add(node);
}

function setControls(batch, enabled) {
  for (const control of batch.node.querySelectorAll("button, input, select, textarea")) control.disabled = !enabled;
}

// Controls of requests still open are enabled; those answered, sent or closed are not.
function refreshControls(batch) {
  if (batch.closed) return setControls(batch, false);
  for (const [requestId, card] of batch.cards) {
    const open = !batch.outcomes.has(requestId) && !batch.sent.has(requestId);
    for (const control of card.querySelectorAll("button, input, select, textarea")) control.disabled = !open;
  }
  batch.sendAll.disabled = batch.staged.size === 0;
  return undefined;
}

function closeBatch(batch, note) {
  if (batch.closed) return;
  batch.closed = true;
  setControls(batch, false);
  batch.node.classList.add("closed");
  batch.node.append(el("p", { class: "answered", text: note }));
  state.batches = state.batches.filter((b) => b !== batch);
}

// `input.resolved`: each resolved request is closed; a batch closes once all of its are.
function resolveRequests(resolutions) {
  for (const resolution of resolutions) {
    for (const batch of state.batches) {
      const card = batch.cards.get(resolution.requestId);
      if (!card) continue;
      batch.outcomes.set(resolution.requestId, resolution.outcome);
      batch.staged.delete(resolution.requestId);
      batch.sent.delete(resolution.requestId);
      card.dataset.outcome = resolution.outcome;
      card.querySelector(".staged").textContent = OUTCOMES[resolution.outcome] ?? resolution.outcome;
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

function renderRequest(request, answer) {
  const card = el("fieldset", { class: "request", "data-request-id": request.requestId, "data-display": request.display });
  card.append(el("legend", { text: request.prompt }));
  const kindLabel = {
    "question": "question",
    "client-tool": `${request.action.toolName}`,
    "tool-approval": "approval",
    "elicitation": `${request.action.toolName} needs`,
  }[request.kind] ?? request.kind;
  const ui = request.action?.input?.ui;
  card.append(el("span", { class: "kind", text: ui?.kind ? `${kindLabel} · ${ui.kind} picker` : kindLabel }));

  const picks = pickField(request);
  if (request.kind === "tool-approval" || request.display === "confirmation") {
    renderConfirmation(card, request, answer);
  } else if (picks) {
    renderChoiceList(card, request, picks, answer);
  } else if (request.display === "select" && request.options?.length) {
    renderButtons(card, request, answer);
  } else if (request.schema) {
    renderSchemaForm(card, request, answer);
  } else {
    renderText(card, request, answer);
  }
  return card;
}

function renderConfirmation(card, request, answer) {
  card.append(el("pre", { text: `${request.action.toolName}(${JSON.stringify(request.action.input, null, 2)})` }));
  const reason = el("input", { type: "text", "aria-label": "Reason (optional)", placeholder: "Reason (optional)" });
  const buttons = (request.options?.length ? request.options : [{ id: "approve", label: "Approve" }, { id: "deny", label: "Deny" }])
    .map((option) => el("button", {
      type: "button",
      class: option.id === "deny" || option.style === "danger" ? "danger" : "primary",
      text: option.label,
      onclick: () => {
        const response = { requestId: request.requestId, optionId: option.id };
        if (option.id === "deny" && reason.value.trim()) response.text = reason.value.trim();
        answer(response);
      },
    }));
  card.append(el("div", { class: "row" }, buttons, reason));
}

function renderChoiceList(card, request, [field, many], answer) {
  const name = `pick-${request.requestId}`;
  const list = el("div", { class: "choices", role: many ? "group" : "radiogroup", "aria-label": request.prompt });
  for (const option of request.options) {
    const input = el("input", { type: many ? "checkbox" : "radio", name, value: option.id });
    list.append(el("label", { class: "choice" }, input,
      el("span", {}, el("span", { text: option.label }), option.description ? el("small", { text: option.description }) : null)));
  }
  const submit = el("button", {
    type: "button",
    class: "primary",
    text: "Submit",
    onclick: () => {
      const picked = [...list.querySelectorAll("input:checked")].map((input) => input.value);
      if (!picked.length) {
        list.setAttribute("aria-invalid", "true");
        return;
      }
      answer({ requestId: request.requestId, value: { [field]: many ? picked : picked[0] } });
    },
  });
  card.append(list, el("div", { class: "row" }, submit, declineButton(request, answer)));
}

function renderButtons(card, request, answer) {
  const row = el("div", { class: "row" });
  for (const option of request.options) {
    row.append(el("button", {
      type: "button",
      class: option.style === "danger" ? "danger" : option.style === "primary" ? "primary" : "",
      text: option.label,
      title: option.description || undefined,
      onclick: () => answer({ requestId: request.requestId, optionId: option.id }),
    }));
  }
  card.append(row);
  if (request.allowFreeform) renderText(card, request, answer, "Or type an answer");
}

function renderText(card, request, answer, placeholder = "Your answer") {
  const box = el("textarea", { rows: 2, "aria-label": placeholder, placeholder });
  const send = el("button", {
    type: "button",
    class: "primary",
    text: "Answer",
    onclick: () => {
      if (!box.value.trim()) return box.focus();
      return answer({ requestId: request.requestId, text: box.value.trim() });
    },
  });
  card.append(box, el("div", { class: "row" }, send));
}

function renderSchemaForm(card, request, answer) {
  const schema = request.schema;
  if (!isFlat(schema)) {
    const box = el("textarea", { rows: 5, "aria-label": "Answer as JSON", text: "{}" });
    const send = el("button", {
      type: "button",
      class: "primary",
      text: "Submit",
      onclick: () => {
        let value;
        try {
          value = JSON.parse(box.value);
        } catch (error) {
          box.setCustomValidity(`Not JSON: ${error.message}`);
          return box.reportValidity();
        }
        return answer({ requestId: request.requestId, value });
      },
    });
    card.append(el("pre", { text: JSON.stringify(schema, null, 2) }), box, el("div", { class: "row" }, send, declineButton(request, answer)));
    return;
  }
  const required = new Set(schema.required || []);
  const form = el("form", { novalidate: false });
  const readers = [];
  for (const [name, spec] of Object.entries(schema.properties)) {
    const id = `f-${request.requestId}-${name}`;
    const label = spec.title || name;
    const must = required.has(name);
    let input;
    let read;
    if (Array.isArray(spec.enum)) {
      input = el("select", { id, name, required: must });
      if (!must) input.append(el("option", { value: "", text: "—" }));
      spec.enum.forEach((choice, index) => input.append(el("option", { value: String(index), text: String(choice) })));
      read = () => (input.value === "" ? undefined : spec.enum[Number(input.value)]);
    } else if (spec.type === "boolean") {
      input = el("input", { id, name, type: "checkbox", checked: spec.default === true });
      read = () => input.checked;
    } else if (spec.type === "number" || spec.type === "integer") {
      input = el("input", {
        id, name, type: "number", required: must,
        step: spec.type === "integer" ? "1" : "any",
        min: spec.minimum ?? undefined, max: spec.maximum ?? undefined,
        value: spec.default ?? undefined,
      });
      read = () => (input.value === "" ? undefined : Number(input.value));
    } else {
      input = el("input", {
        id, name, type: spec.format === "email" ? "email" : "text", required: must,
        minlength: spec.minLength ?? undefined, maxlength: spec.maxLength ?? undefined,
        pattern: spec.pattern ?? undefined, value: spec.default ?? undefined,
      });
      read = () => (input.value === "" && !must ? undefined : input.value);
    }
    readers.push([name, read]);
    const help = spec.description ? el("small", { text: spec.description }) : null;
    if (spec.type === "boolean") {
      form.append(el("div", { class: "field check" }, input, el("label", { for: id, text: label }), help));
    } else {
      form.append(el("div", { class: "field" }, el("label", { for: id, text: must ? `${label} *` : label }), input, help));
    }
  }
  form.append(el("div", { class: "row" }, el("button", { type: "submit", class: "primary", text: "Submit" }), declineButton(request, answer)));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    const value = {};
    for (const [name, read] of readers) {
      const got = read();
      if (got !== undefined) value[name] = got;
    }
    answer({ requestId: request.requestId, value });
  });
  card.append(form);
}

function declineButton(request, answer) {
  return el("button", {
    type: "button",
    text: request.kind === "elicitation" ? "Decline" : "Skip",
    onclick: () => answer({ requestId: request.requestId, action: "decline" }),
  });
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
    state.token = $("token-input").value.trim();
    sessionStorage.setItem("eve-token", state.token);
    $("token-form").hidden = true;
    if (state.sessionId) follow();
  });

  try {
    // eve's health: {ok: true, status: "ready", workflowId}; eve-py's workflowId is "eve-py:<agent>".
    const health = await api("GET", "/health");
    const workflow = typeof health.workflowId === "string" ? health.workflowId : "";
    $("agent-name").textContent = workflow.replace(/^eve-py:/, "");
  } catch (error) {
    setStatus("failed", `The server does not answer: ${error.message}`);
  }
  const match = /session=([^&]+)/.exec(location.hash);
  if (match) {
    state.sessionId = decodeURIComponent(match[1]);
    showSession();
    follow();
  }
}

start();
