// eve-py browser chat: talks to the session API under /eve/v1, follows the NDJSON stream and
// renders input requests as widgets. No build step, no dependencies.
"use strict";

const API = "/eve/v1";

const state = {
  token: sessionStorage.getItem("eve-token") || "",
  sessionId: null,
  cursor: 0, // index of the next stored event (deltas are not stored and do not count)
  stream: null, // AbortController of the stream being read
  live: new Map(), // "turnId:stepIndex" -> assistant bubble being streamed
  deltaSeen: new Map(), // "turnId:stepIndex" -> how many of the step's deltas were applied
  batches: [], // open request batches
};

const $ = (id) => document.getElementById(id);

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

async function api(method, path, body) {
  const response = await fetch(API + path, {
    method,
    headers: headers(body !== undefined),
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = data.error || {};
    if (response.status === 401) askForToken();
    throw new ApiError(response.status, error.code || "http_error", error.message || response.statusText);
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
  }[status];
  const busy = status === "working";
  $("send").disabled = busy;
  $("cancel").hidden = !busy;
}

function showSession() {
  $("session-label").textContent = state.sessionId ? `session ${state.sessionId}` : "";
}

function stepKey(data) {
  return `${data.turnId}:${data.stepIndex}`;
}

function handle(event) {
  const data = event.data || {};
  switch (event.type) {
    case "message.received":
      add(el("div", { class: "msg user", text: data.message?.content ?? "" }));
      break;
    case "message.delta": {
      // After a reconnect the running step's deltas come again: skip the ones already shown.
      const seen = state.deltaSeen.get(stepKey(data)) ?? 0;
      if (typeof data.deltaIndex === "number") {
        if (data.deltaIndex < seen) break;
        state.deltaSeen.set(stepKey(data), data.deltaIndex + 1);
      }
      if (data.kind !== "text" || !data.text) break;
      let bubble = state.live.get(stepKey(data));
      if (!bubble) {
        bubble = add(el("div", { class: "msg assistant streaming" }));
        state.live.set(stepKey(data), bubble);
      }
      bubble.textContent += data.text;
      scrollDown();
      break;
    }
    case "message.completed": {
      const bubble = state.live.get(stepKey(data));
      state.live.delete(stepKey(data));
      if (bubble) {
        bubble.classList.remove("streaming");
        bubble.textContent = data.text;
      } else {
        add(el("div", { class: "msg assistant", text: data.text }));
      }
      break;
    }
    case "action.result":
      add(el("div", {
        class: data.isError ? "tool error" : "tool",
        text: `${data.isError ? "✗" : "↳"} ${data.toolName}: ${JSON.stringify(data.output)}`,
      }));
      break;
    case "input.requested":
      addBatch(data);
      break;
    case "input.resolved":
      resolveBatch(data);
      break;
    case "turn.started":
      setStatus("working");
      break;
    case "turn.completed":
      setStatus(data.status === "waiting" ? "waiting" : "completed");
      break;
    case "turn.failed":
      setStatus("failed", `The turn failed: ${data.error?.message ?? "unknown error"}`);
      break;
    case "turn.cancelled":
      for (const bubble of state.live.values()) bubble.remove();
      state.live.clear();
      setStatus("cancelled");
      break;
    case "session.failed":
      setStatus("failed", `The session failed: ${data.error?.message ?? "unknown error"}`);
      break;
    default:
      break;
  }
}

// --- the stream --------------------------------------------------------------------------------

async function follow() {
  if (!state.sessionId) return;
  state.stream?.abort();
  const controller = new AbortController();
  state.stream = controller;
  const sessionId = state.sessionId;
  let failures = 0;
  while (!controller.signal.aborted) {
    try {
      const response = await fetch(
        `${API}/session/${encodeURIComponent(sessionId)}/stream?startIndex=${state.cursor}`,
        { headers: headers(false), signal: controller.signal },
      );
      if (!response.ok) {
        const data = await response.json().catch(() => ({}));
        if (response.status === 401) askForToken();
        if (response.status === 404) forgetSession();
        setStatus("failed", data.error?.message ?? response.statusText);
        return;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let newline;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (!line.trim()) continue;
          const event = JSON.parse(line);
          if (event.type !== "message.delta") state.cursor += 1;
          failures = 0;
          handle(event);
        }
      }
      return; // the turn settled
    } catch (error) {
      if (controller.signal.aborted) return;
      failures += 1;
      if (failures > 5) {
        setStatus("failed", `Lost the connection: ${error.message}`);
        return;
      }
      setStatus("working", "Reconnecting…");
      await new Promise((resolve) => setTimeout(resolve, 250 * failures));
    }
  }
}

// --- sessions ----------------------------------------------------------------------------------

function forgetSession() {
  state.stream?.abort();
  state.sessionId = null;
  state.cursor = 0;
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

async function sendMessage(text) {
  if (!state.sessionId) {
    const accepted = await api("POST", "/session", { message: text });
    state.sessionId = accepted.sessionId;
    state.cursor = 0;
    history.replaceState(null, "", `#session=${encodeURIComponent(accepted.sessionId)}`);
    showSession();
  } else {
    await api("POST", `/session/${encodeURIComponent(state.sessionId)}`, { message: text });
  }
  setStatus("working");
  follow();
}

async function respond(responses) {
  await api("POST", `/session/${encodeURIComponent(state.sessionId)}`, { inputResponses: responses });
  setStatus("working");
  follow();
}

// --- input requests ----------------------------------------------------------------------------

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

function addBatch(data) {
  for (const old of state.batches) closeBatch(old, "Replaced by a newer question.");
  const node = el("section", { class: "batch", "aria-label": "The agent needs your input" });
  const batch = { turnId: data.turnId, stepIndex: data.stepIndex, node, cards: new Map(), staged: new Map() };
  const single = data.requests.length === 1;
  const error = el("p", { class: "error-text", role: "alert", hidden: true });
  batch.error = error;
  batch.submit = async (responses) => {
    error.hidden = true;
    setControls(batch, false);
    try {
      await respond(responses);
      closeBatch(batch, "Answer sent.");
    } catch (failure) {
      error.textContent = failure.message;
      error.hidden = false;
      setControls(batch, true);
    }
  };
  for (const request of data.requests) {
    const answer = (response) => {
      if (single) return batch.submit([response]);
      batch.staged.set(request.requestId, response);
      const card = batch.cards.get(request.requestId);
      card.querySelector(".staged").textContent = "✓ ready to send";
      sendAll.disabled = false;
      return undefined;
    };
    const card = renderRequest(request, answer);
    card.append(el("span", { class: "staged" }));
    batch.cards.set(request.requestId, card);
    node.append(card);
  }
  const sendAll = el("button", {
    type: "button",
    class: "primary",
    text: "Send answers",
    disabled: true,
    onclick: () => batch.submit([...batch.staged.values()]),
  });
  if (!single) node.append(el("div", { class: "row" }, sendAll, el("small", { class: "muted", text: "Questions you leave unanswered are skipped." })));
  node.append(error);
  state.batches.push(batch);
  add(node);
}

function setControls(batch, enabled) {
  for (const control of batch.node.querySelectorAll("button, input, select, textarea")) control.disabled = !enabled;
}

function closeBatch(batch, note) {
  if (batch.closed) return;
  batch.closed = true;
  setControls(batch, false);
  batch.node.classList.add("closed");
  batch.node.append(el("p", { class: "answered", text: note }));
  state.batches = state.batches.filter((b) => b !== batch);
}

function resolveBatch(data) {
  const open = new Set(data.open || []);
  for (const batch of [...state.batches]) {
    if (batch.turnId !== data.turnId || batch.stepIndex !== data.stepIndex) continue;
    if (data.dismissed) {
      closeBatch(batch, "Skipped: a new message was sent instead.");
    } else if (open.size === 0) {
      closeBatch(batch, "Answered.");
    } else {
      for (const [requestId, card] of batch.cards) {
        if (!open.has(requestId)) {
          for (const control of card.querySelectorAll("button, input, select, textarea")) control.disabled = true;
          card.querySelector(".staged").textContent = "✓ answered";
        }
      }
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
    try {
      await api("POST", `/session/${encodeURIComponent(state.sessionId)}/cancel`, {});
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
    const health = await api("GET", "/health");
    $("agent-name").textContent = health.agent || "";
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
