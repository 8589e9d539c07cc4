// eve-py browser chat: one input request as a card a person answers (a picker, an approval, option
// buttons, a text box or a form generated from the answer's JSON Schema; an editable approval's
// Edit form from its tool's input schema), and values shown as words rather than JSON. Loaded
// before chat.js, which owns the batches and the wire.
"use strict";

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

// --- values as words -----------------------------------------------------------------------------

function humanKey(key) {
  return String(key).replace(/([a-z])([A-Z])/g, (_, a, b) => `${a} ${b.toLowerCase()}`).replace(/_/g, " ");
}

// A short readable rendering of a JSON value: yes/no for booleans, lists joined by commas,
// nested objects as "key: value" pairs.
function plain(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.length ? value.map(plain).join(", ") : "none";
  if (typeof value === "object") return Object.entries(value).map(([k, v]) => `${humanKey(k)}: ${plain(v)}`).join("; ");
  return String(value);
}

// A JSON value as a list of "key value" rows (an object), or one line of text (anything else).
function valueView(value, label) {
  if (value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length) {
    const list = el("dl", { class: "fields", "aria-label": label });
    for (const [key, item] of Object.entries(value)) {
      list.append(el("div", {}, el("dt", { text: humanKey(key) }), el("dd", { text: plain(item) })));
    }
    return list;
  }
  return el("span", { class: "value", text: plain(value) });
}

function optionLabel(request, id) {
  return request.options?.find((option) => option.id === id)?.label ?? id;
}

// What an accepted answer chose, in the words the card showed.
function describeAnswer(request, response) {
  if (!response) return "";
  if (response.action === "decline" || response.action === "cancel") return "";
  if (request.kind === "tool-approval") {
    if (response.optionId === "deny" && response.text) return `reason: ${response.text}`;
    return response.editedInput ? describeChanges(request, response.editedInput) : "";
  }
  const parts = [];
  if (response.optionId) parts.push(optionLabel(request, response.optionId));
  if (response.value !== undefined && response.value !== null) {
    const picks = pickField(request);
    const value = response.value;
    if (picks && value && typeof value === "object" && value[picks[0]] !== undefined) {
      const ids = Array.isArray(value[picks[0]]) ? value[picks[0]] : [value[picks[0]]];
      parts.push(ids.map((id) => optionLabel(request, id)).join(", "));
    } else if (value && typeof value === "object" && !Array.isArray(value)) {
      const titles = request.schema?.properties || {};
      parts.push(Object.entries(value).map(([k, v]) => `${titles[k]?.title || humanKey(k)}: ${plain(v)}`).join(" · "));
    } else {
      parts.push(plain(value));
    }
  }
  if (response.text && !response.optionId) parts.push(`“${response.text}”`);
  return parts.join(" · ");
}

// The fields an approval's edit changed from the call's input, "To: news@example.org" style
// ("" when it changed nothing).
function describeChanges(request, edited) {
  if (!edited || typeof edited !== "object" || Array.isArray(edited)) return plain(edited);
  const before = withoutUi(request.action?.input) || {};
  const titles = request.editSchema?.properties || {};
  const keys = [...new Set([...Object.keys(before), ...Object.keys(edited)])];
  return keys
    .filter((key) => JSON.stringify(before[key]) !== JSON.stringify(edited[key]))
    .map((key) => `${titles[key]?.title || humanKey(key)}: ${plain(edited[key])}`)
    .join(" · ");
}

// How a request ended, in words (`input.resolved`'s outcome).
const OUTCOMES = {
  answered: "✓ answered",
  approved: "✓ approved",
  denied: "✗ denied",
  ignored: "skipped",
  cancelled: "withdrawn: the turn was stopped",
  expired: "⊘ expired: not answered in time",
  invalid: "✗ not accepted",
};

// Who answered (`answeredBy`), when it says more than "this person here": none for `local` (no API
// token) or a bare token's anonymous principal (`tok_` and a digest).
function answeredBy(name) {
  if (!name || name === "local" || /^tok_[0-9a-f]{24}$/.test(name)) return "";
  return name === "link" ? "through an answer link" : `by ${name}`;
}

// A resolved request's line: "✓ approved by alice", "✓ answered: Blue", "⊘ expired: ...".
function outcomeText(request, resolution) {
  const chosen = describeAnswer(request, resolution.response);
  const edited = resolution.outcome === "approved" && chosen && resolution.response?.editedInput;
  const outcome = edited ? "✓ approved with changes" : OUTCOMES[resolution.outcome] ?? resolution.outcome;
  const who = answeredBy(resolution.answeredBy);
  const line = who ? `${outcome} ${who}` : outcome;
  return chosen ? `${line}: ${chosen}` : line;
}

// --- deadlines -----------------------------------------------------------------------------------

// "3 d 4 h", "2 h 5 min", "4 min 12 s", "42 s": a span of milliseconds, as short words.
function timeLeft(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const [days, hours, minutes, seconds] = [Math.floor(total / 86400), Math.floor((total % 86400) / 3600), Math.floor((total % 3600) / 60), total % 60];
  if (days) return hours ? `${days} d ${hours} h` : `${days} d`;
  if (hours) return minutes ? `${hours} h ${minutes} min` : `${hours} h`;
  if (minutes) return minutes < 10 && seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
  return `${seconds} s`;
}

// A moment as the person's clock shows it: "14:30", or "25 Nov, 14:30" on another day.
function clockText(at) {
  const today = new Date().toDateString() === at.toDateString();
  const options = today ? { hour: "2-digit", minute: "2-digit" } : { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" };
  return at.toLocaleString([], options);
}

const deadlines = new Set(); // the deadline lines on the page that still count down
let deadlineTimer = null;

function tickDeadlines() {
  for (const line of [...deadlines]) {
    if (!line.isConnected) deadlines.delete(line); // its card was replaced (a new chat, a reload)
    else line.update();
  }
  if (!deadlines.size) {
    clearInterval(deadlineTimer);
    deadlineTimer = null;
  }
}

// "4 min 12 s left to answer (until 14:30)", counting down each second until `stop()`; "Time is
// up" once the moment passed (the server then resolves the request as expired). `what` says
// what ends: "to answer" for a request's own deadline.
function deadlineView(expiresAt, what = "to answer") {
  const at = new Date(expiresAt);
  if (Number.isNaN(at.getTime())) return null;
  const left = el("span", { class: "left" });
  const line = el("p", { class: "deadline", "data-expires-at": expiresAt },
    left, " ", el("time", { datetime: at.toISOString(), text: `(until ${clockText(at)})` }));
  line.update = () => {
    const ms = at.getTime() - Date.now();
    line.classList.toggle("late", ms <= 0);
    line.classList.toggle("soon", ms > 0 && ms <= 60_000);
    left.textContent = ms > 0 ? `${timeLeft(ms)} left ${what}` : "Time is up";
  };
  line.stop = () => {
    deadlines.delete(line);
    line.hidden = true;
  };
  line.update();
  deadlines.add(line);
  deadlineTimer ??= setInterval(tickDeadlines, 1000);
  return line;
}

// --- which widget --------------------------------------------------------------------------------

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

// The card of one request. `answer(response)` sends (or, in a batch of several, stages) it.
// Returns {node, read, showError, focus, settle}: `read()` gives what the card shows right now as
// {response}, {empty: true} (nothing picked or typed) or {error} (something shown that cannot be
// sent, with the reason, which the card then shows).
function renderRequest(request, answer, single) {
  const id = `req-${request.requestId}`;
  const node = el("fieldset", {
    class: "request",
    "data-request-id": request.requestId,
    "data-display": request.display,
    "aria-describedby": `${id}-error ${id}-status`,
  });
  node.append(el("legend", { text: request.prompt }));
  const kindLabel = {
    "question": "question",
    "client-tool": `${request.action.toolName}`,
    "tool-approval": "approval",
    "elicitation": `${request.action.toolName} needs`,
  }[request.kind] ?? request.kind;
  const ui = request.action?.input?.ui;
  node.append(el("span", { class: "kind", text: ui?.kind ? `${kindLabel} · ${ui.kind} picker` : kindLabel }));
  const deadline = request.expiresAt ? deadlineView(request.expiresAt) : null;
  if (deadline) node.append(deadline);

  const error = el("p", { class: "error-text", id: `${id}-error`, role: "alert", hidden: true });
  const status = el("span", { class: "staged", id: `${id}-status` });
  const card = {
    request,
    node,
    status,
    single,
    showError(message, control) {
      error.textContent = message;
      error.hidden = !message;
      for (const marked of node.querySelectorAll("[aria-invalid]")) marked.removeAttribute("aria-invalid");
      if (message && control) {
        control.setAttribute("aria-invalid", "true");
        control.focus();
      }
    },
    // The card's request is closed (answered, expired, withdrawn): its deadline stops counting.
    closed() {
      deadline?.stop();
    },
    // The control to mark when the server refuses this card's answer with `message` (none here;
    // an approval's Edit form names the field).
    refusedControl: () => undefined,
    focus() {
      const shown = (selector) => [...node.querySelectorAll(selector)].find((control) => control.checkVisibility());
      const chosen = shown('input:checked:not(:disabled), button[aria-pressed="true"]:not(:disabled)');
      (chosen ?? shown("input:not(:disabled), textarea:not(:disabled), select:not(:disabled), button:not(:disabled)"))?.focus();
    },
  };
  // In a batch of several, a button choice (approve, deny, an option) stays pressed until sent.
  const choose = (response, pressed) => {
    if (single) return answer(response);
    for (const button of node.querySelectorAll("button[aria-pressed]")) button.setAttribute("aria-pressed", String(button === pressed));
    card.chosen = response;
    card.showError("");
    return answer(response);
  };
  const send = () => {
    const got = card.read(true);
    if (got.error) return undefined;
    if (got.empty) return card.showError(emptyReason(request), card.firstInput);
    card.showError("");
    return answer(got.response);
  };

  const picks = pickField(request);
  if (request.kind === "tool-approval" || request.display === "confirmation") renderConfirmation(card, choose);
  else if (picks) renderChoiceList(card, picks, send);
  else if (request.display === "select" && request.options?.length) renderButtons(card, choose, send);
  else if (request.schema && isFlat(request.schema)) renderSchemaForm(card, send);
  else if (request.schema) renderJson(card, send);
  else renderText(card, send);
  if (request.kind !== "tool-approval" && request.display !== "confirmation") {
    const row = node.querySelector(".actions");
    const decline = el("button", {
      type: "button",
      text: request.kind === "elicitation" ? "Decline" : "Skip",
      "aria-pressed": single ? undefined : "false",
      onclick: () => {
        if (!single && card.skipped) {
          card.skipped = false;
          decline.setAttribute("aria-pressed", "false");
          return answer(null);
        }
        card.skipped = true;
        if (!single) decline.setAttribute("aria-pressed", "true");
        card.showError("");
        return answer({ requestId: request.requestId, action: "decline" });
      },
    });
    row.append(decline);
  }
  // `explicit`: the card's own Submit was pressed (an untouched form is then an answer too).
  const read = card.read;
  card.read = (explicit = false) => {
    if (card.skipped) return { response: { requestId: request.requestId, action: "decline" } };
    const got = read(explicit);
    if (got.error) card.showError(got.error, got.control);
    return got;
  };
  node.append(error, status);
  return card;
}

function emptyReason(request) {
  if (pickField(request)) return "Pick at least one option first (or press Skip).";
  if (request.options?.length) return "Choose an option first (or press Skip).";
  return "Type an answer first (or press Skip).";
}

function actions(...children) {
  return el("div", { class: "row actions" }, ...children);
}

function renderConfirmation(card, choose) {
  const { request, node } = card;
  const intro = el("p", { class: "muted", text: `${request.action.toolName} will run with:` });
  const view = valueView(withoutUi(request.action.input), "Tool input");
  node.append(intro, view);
  const reason = el("input", { type: "text", "aria-label": "Reason for denying (optional)", placeholder: "Reason for denying (optional)" });
  const options = request.options?.length ? request.options : [{ id: "approve", label: "Approve" }, { id: "deny", label: "Deny" }];
  const buttons = options.map((option) => {
    const button = el("button", {
      type: "button",
      class: option.id === "deny" || option.style === "danger" ? "danger" : "primary",
      text: option.label,
      onclick: () => {
        const response = { requestId: request.requestId, optionId: option.id };
        if (option.id === "deny" && reason.value.trim()) response.text = reason.value.trim();
        return choose(response, button);
      },
    });
    return button;
  });
  if (!card.single) for (const button of buttons) button.setAttribute("aria-pressed", "false");
  const row = actions(buttons, reason);
  node.append(row);
  const editing = request.editSchema && options.some((option) => option.id === "approve") ? renderEdit(card, choose, [intro, view, row]) : null;
  if (editing) buttons[options.findIndex((option) => option.id === "approve")].after(editing.button);
  card.read = () => {
    if (editing?.open()) return editing.read();
    if (!card.chosen) return { empty: true };
    const response = { ...card.chosen };
    if (response.optionId === "deny" && reason.value.trim()) response.text = reason.value.trim();
    return { response };
  };
}

// An editable approval's Edit button and the form it opens in place of the card's plain view
// (`plainParts`): the tool's input schema (`editSchema`) as fields prefilled with the call's input,
// "Approve with changes" sending {optionId: "approve", editedInput}, and "Cancel edit" going back.
// Returns {button, open(), read()}; `read()` as a card's (see renderRequest).
function renderEdit(card, choose, plainParts) {
  const { request, node } = card;
  const toolName = request.action.toolName;
  const current = withoutUi(request.action.input) || {};
  const editor = el("div", { class: "edit", id: `req-${request.requestId}-edit`, hidden: true });
  const approve = el("button", { type: "submit", class: "primary", text: "Approve with changes", "aria-pressed": card.single ? undefined : "false" });
  const cancel = el("button", { type: "button", text: "Cancel edit", onclick: () => close() });
  const button = el("button", {
    type: "button",
    text: "Edit",
    title: `Change ${toolName}'s input, then approve`,
    "aria-controls": editor.id,
    onclick: () => show(),
  });
  let fields = null; // the open form (see schemaForm / jsonForm)
  let dirty = false;

  const unchoose = () => {
    if (!card.single && card.chosen) choose(null, null); // a choice marked but not sent is taken back
  };
  const show = () => {
    unchoose();
    dirty = false;
    const onInput = () => {
      dirty = true;
      card.showError("");
    };
    const id = `e-${request.requestId}`;
    fields = isFlat(request.editSchema) ? schemaForm(request.editSchema, id, current, onInput) : jsonForm(request.editSchema, current, onInput);
    fields.form.setAttribute("aria-label", `Edit ${toolName}'s input`);
    fields.form.append(actions(approve, cancel));
    fields.form.addEventListener("submit", (event) => {
      event.preventDefault();
      send();
    });
    fields.form.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        close();
      }
    });
    editor.replaceChildren(el("p", { class: "muted", text: `Change what ${toolName} will run with, then approve:` }), fields.form);
    for (const part of plainParts) part.hidden = true;
    editor.hidden = false;
    card.showError("");
    fields.firstInput?.focus();
  };
  const close = () => {
    unchoose();
    fields = null;
    editor.replaceChildren();
    editor.hidden = true;
    for (const part of plainParts) part.hidden = false;
    card.showError("");
    button.focus();
  };
  // What the form shows, checked: {response} or {error, control}.
  const edited = () => {
    const got = fields.read(true);
    if (got.error) return got;
    return { response: { requestId: request.requestId, optionId: "approve", editedInput: got.value } };
  };
  const send = () => {
    const got = edited();
    if (got.error) return card.showError(got.error, got.control);
    card.showError("");
    return choose(got.response, approve);
  };
  // A refusal naming a field ("... input schema at to: ...") marks that field; else the first.
  card.refusedControl = (message) => {
    if (!fields) return undefined;
    const named = /input schema at ([^:\s]+):/.exec(message)?.[1];
    return fields.control(named) ?? fields.firstInput;
  };
  node.append(editor);
  return {
    button,
    open: () => fields !== null,
    read() {
      if (card.chosen?.editedInput !== undefined) return edited(); // sent as the form shows it now
      if (!dirty) return { empty: true };
      return { error: "Press “Approve with changes” to send your changes (or Cancel edit).", control: approve };
    },
  };
}

function withoutUi(input) {
  if (!input || typeof input !== "object") return input;
  const { ui, ...rest } = input;
  return rest;
}

function renderChoiceList(card, [field, many], send) {
  const { request, node } = card;
  const name = `pick-${request.requestId}`;
  const list = el("div", { class: "choices", role: many ? "group" : "radiogroup", "aria-label": request.prompt });
  for (const option of request.options) {
    const input = el("input", { type: many ? "checkbox" : "radio", name, value: option.id });
    input.addEventListener("change", () => card.showError(""));
    list.append(el("label", { class: "choice" }, input,
      el("span", {}, el("span", { text: option.label }), option.description ? el("small", { text: option.description }) : null)));
  }
  card.firstInput = list.querySelector("input");
  node.append(list, actions(el("button", { type: "button", class: "primary", text: "Submit", onclick: send })));
  card.read = () => {
    const picked = [...list.querySelectorAll("input:checked")].map((input) => input.value);
    if (!picked.length) return { empty: true };
    return { response: { requestId: request.requestId, value: { [field]: many ? picked : picked[0] } } };
  };
}

function renderButtons(card, choose, send) {
  const { request, node } = card;
  const buttons = request.options.map((option) => {
    const button = el("button", {
      type: "button",
      class: option.style === "danger" ? "danger" : option.style === "primary" ? "primary" : "",
      text: option.label,
      title: option.description || undefined,
      onclick: () => {
        if (box) box.value = "";
        return choose({ requestId: request.requestId, optionId: option.id }, button);
      },
    });
    return button;
  });
  if (!card.single) for (const button of buttons) button.setAttribute("aria-pressed", "false");
  let box = null;
  node.append(actions(buttons));
  if (request.allowFreeform) {
    box = el("textarea", { rows: 2, "aria-label": "Or type an answer", placeholder: "Or type an answer" });
    box.addEventListener("input", () => {
      card.chosen = null;
      for (const button of buttons) if (button.hasAttribute("aria-pressed")) button.setAttribute("aria-pressed", "false");
    });
    answerOnEnter(box, send);
    node.append(box, el("div", { class: "row" }, el("button", { type: "button", class: "primary", text: "Answer", onclick: send })));
  }
  card.firstInput = buttons[0];
  card.read = () => {
    if (box?.value.trim()) return { response: { requestId: request.requestId, text: box.value.trim() } };
    return card.chosen ? { response: card.chosen } : { empty: true };
  };
}

// Enter answers (Shift+Enter starts a new line), as in the message box.
function answerOnEnter(box, send) {
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      send();
    }
  });
}

function renderText(card, send) {
  const { request, node } = card;
  const box = el("textarea", { rows: 2, "aria-label": "Your answer", placeholder: "Your answer" });
  answerOnEnter(box, send);
  box.addEventListener("input", () => card.showError(""));
  card.firstInput = box;
  node.append(box, actions(el("button", { type: "button", class: "primary", text: "Answer", onclick: send })));
  card.read = () => (box.value.trim() ? { response: { requestId: request.requestId, text: box.value.trim() } } : { empty: true });
}

function renderJson(card, send) {
  const { request, node } = card;
  const box = el("textarea", { rows: 5, "aria-label": "Answer as JSON", placeholder: "{}" });
  box.addEventListener("input", () => card.showError(""));
  card.firstInput = box;
  node.append(el("details", {}, el("summary", { text: "The answer's JSON Schema" }), el("pre", { text: JSON.stringify(request.schema, null, 2) })),
    box, actions(el("button", { type: "button", class: "primary", text: "Submit", onclick: send })));
  card.read = () => {
    if (!box.value.trim()) return { empty: true };
    try {
      return { response: { requestId: request.requestId, value: JSON.parse(box.value) } };
    } catch (failure) {
      return { error: `Not JSON: ${failure.message}`, control: box };
    }
  };
}

// A JSON box for an object schema the generated form cannot show, prefilled with `values`:
// {form, firstInput, control(name), read()} as schemaForm's.
function jsonForm(schema, values, onInput) {
  const box = el("textarea", { rows: 5, "aria-label": "Input as JSON" });
  box.value = JSON.stringify(values, null, 2);
  box.addEventListener("input", onInput);
  const form = el("form", { novalidate: true },
    el("details", {}, el("summary", { text: "The input's JSON Schema" }), el("pre", { text: JSON.stringify(schema, null, 2) })), box);
  return {
    form,
    firstInput: box,
    control: () => box,
    read() {
      try {
        const value = JSON.parse(box.value);
        if (value && typeof value === "object" && !Array.isArray(value)) return { value };
        return { error: "The input must be a JSON object.", control: box };
      } catch (failure) {
        return { error: `Not JSON: ${failure.message}`, control: box };
      }
    },
  };
}

// The local time zone's offset, "+02:00" style (RFC 3339 wants one on times).
function zoneOffset(date) {
  const minutes = -date.getTimezoneOffset();
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

// The input matching a string field's `format`, and how its value becomes the JSON string.
// `write` turns a JSON string into the input's value (local time for date-time and time inputs).
const FORMAT_INPUTS = {
  "date": { type: "date", read: (raw) => raw },
  "date-time": {
    type: "datetime-local",
    step: "1",
    read: (raw) => `${raw.length === 16 ? `${raw}:00` : raw}${zoneOffset(new Date(raw))}`,
    write: (value) => localClock(new Date(value), true),
  },
  "time": {
    type: "time",
    step: "1",
    read: (raw) => `${raw.length === 5 ? `${raw}:00` : raw}${zoneOffset(new Date())}`,
    write: (value) => localClock(new Date(`${localClock(new Date(), true).slice(0, 10)}T${value}`), false),
  },
  "email": { type: "email", read: (raw) => raw },
  "uri": { type: "url", read: (raw) => raw },
};

// A date as the local "YYYY-MM-DDTHH:MM:SS" (`withDate`) or "HH:MM:SS"; "" for an invalid date.
function localClock(date, withDate) {
  if (Number.isNaN(date.getTime())) return "";
  const two = (n) => String(n).padStart(2, "0");
  const clock = `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
  return withDate ? `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}T${clock}` : clock;
}

// The input of one field, showing `initial` (else the field's default), and how to read its value.
function fieldInput(id, name, spec, must, initial) {
  const start = initial !== undefined ? initial : spec.default;
  if (Array.isArray(spec.enum)) {
    const input = el("select", { id, name, required: must });
    if (!must) input.append(el("option", { value: "", text: "—" }));
    spec.enum.forEach((choice, index) => input.append(el("option", { value: String(index), text: String(choice) })));
    if (start !== undefined && spec.enum.includes(start)) input.value = String(spec.enum.indexOf(start));
    return [input, () => (input.value === "" ? undefined : spec.enum[Number(input.value)])];
  }
  if (spec.type === "boolean") {
    const input = el("input", { id, name, type: "checkbox", checked: start === true });
    return [input, () => input.checked];
  }
  if (spec.type === "number" || spec.type === "integer") {
    const input = el("input", {
      id, name, type: "number", required: must, inputmode: spec.type === "integer" ? "numeric" : "decimal",
      step: spec.type === "integer" ? "1" : "any",
      min: spec.minimum ?? undefined, max: spec.maximum ?? undefined,
      value: start ?? undefined,
    });
    return [input, () => (input.value === "" ? undefined : Number(input.value))];
  }
  const format = FORMAT_INPUTS[spec.format];
  const input = el("input", {
    id, name, type: format?.type ?? "text", required: must, step: format?.step,
    minlength: spec.minLength ?? undefined, maxlength: spec.maxLength ?? undefined,
    pattern: spec.pattern ?? undefined,
    value: start === undefined || start === null ? undefined : format?.write ? format.write(String(start)) : String(start),
  });
  return [input, () => (input.value === "" ? (must ? "" : undefined) : (format ? format.read(input.value) : input.value))];
}

function renderSchemaForm(card, send) {
  const { request, node } = card;
  const fields = schemaForm(request.schema, `f-${request.requestId}`, {}, () => card.showError(""));
  card.firstInput = fields.firstInput;
  fields.form.append(actions(el("button", { type: "submit", class: "primary", text: "Submit" })));
  fields.form.addEventListener("submit", (event) => {
    event.preventDefault();
    send();
  });
  node.append(fields.form);
  card.read = (explicit) => {
    const got = fields.read(explicit);
    return got.value ? { response: { requestId: request.requestId, value: got.value } } : got;
  };
}

// A form generated from a flat object schema: one labelled input per property (ids
// `${idPrefix}-${name}`), showing `values` (else each field's default); `onInput` runs on every
// change. Returns {form, firstInput, control(name), read(explicit)}: `read` gives {value},
// {empty: true} (nothing changed, and not `explicit`) or {error, control}.
function schemaForm(schema, idPrefix, values, onInput) {
  const required = new Set(schema.required || []);
  const form = el("form", { novalidate: true });
  const fields = [];
  for (const [name, spec] of Object.entries(schema.properties)) {
    const id = `${idPrefix}-${name}`;
    const label = spec.title || humanKey(name);
    const must = required.has(name);
    const [input, read] = fieldInput(id, name, spec, must, values[name]);
    input.addEventListener("input", onInput);
    fields.push({ name, label, input, read, boolean: spec.type === "boolean" });
    const help = spec.description ? el("small", { id: `${id}-help`, text: spec.description }) : null;
    if (help) input.setAttribute("aria-describedby", help.id);
    if (spec.type === "boolean") {
      form.append(el("div", { class: "field check" }, input, el("label", { for: id, text: label }), help));
    } else {
      form.append(el("div", { class: "field" }, el("label", { for: id, text: must ? `${label} (required)` : label }), input, help));
    }
  }
  return {
    form,
    firstInput: fields[0]?.input,
    control: (name) => fields.find((field) => field.name === name)?.input,
    read(explicit) {
      const touched = fields.some((field) => (field.boolean ? field.input.checked !== field.input.defaultChecked : field.input.value !== field.input.defaultValue));
      if (!touched && !explicit) return { empty: true };
      for (const field of fields) {
        if (!field.input.checkValidity()) return { error: `${field.label}: ${field.input.validationMessage}`, control: field.input };
      }
      const value = {};
      for (const field of fields) {
        const got = field.read();
        if (got !== undefined) value[field.name] = got;
      }
      return { value };
    },
  };
}
