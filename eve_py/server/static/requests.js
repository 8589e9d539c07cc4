// eve-py browser chat: one input request as a card a person answers (a picker, an approval, option
// buttons, a text box or a form generated from the answer's JSON Schema), and values shown as
// words rather than JSON. Loaded before chat.js, which owns the batches and the wire.
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
  if (request.kind === "tool-approval") return response.optionId === "deny" && response.text ? `reason: ${response.text}` : "";
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
    focus() {
      const chosen = node.querySelector('input:checked:not(:disabled), button[aria-pressed="true"]:not(:disabled)');
      (chosen ?? node.querySelector("input:not(:disabled), textarea:not(:disabled), select:not(:disabled), button:not(:disabled)"))?.focus();
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
  node.append(el("p", { class: "muted", text: `${request.action.toolName} will run with:` }), valueView(withoutUi(request.action.input), "Tool input"));
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
  node.append(actions(buttons, reason));
  card.read = () => {
    if (!card.chosen) return { empty: true };
    const response = { ...card.chosen };
    if (response.optionId === "deny" && reason.value.trim()) response.text = reason.value.trim();
    return { response };
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

// The local time zone's offset, "+02:00" style (RFC 3339 wants one on times).
function zoneOffset(date) {
  const minutes = -date.getTimezoneOffset();
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

// The input matching a string field's `format`, and how its value becomes the JSON string.
const FORMAT_INPUTS = {
  "date": { type: "date", read: (raw) => raw },
  "date-time": {
    type: "datetime-local",
    step: "1",
    read: (raw) => `${raw.length === 16 ? `${raw}:00` : raw}${zoneOffset(new Date(raw))}`,
  },
  "time": { type: "time", step: "1", read: (raw) => `${raw.length === 5 ? `${raw}:00` : raw}${zoneOffset(new Date())}` },
  "email": { type: "email", read: (raw) => raw },
  "uri": { type: "url", read: (raw) => raw },
};

function fieldInput(id, name, spec, must) {
  if (Array.isArray(spec.enum)) {
    const input = el("select", { id, name, required: must });
    if (!must) input.append(el("option", { value: "", text: "—" }));
    spec.enum.forEach((choice, index) => input.append(el("option", { value: String(index), text: String(choice) })));
    if (spec.default !== undefined && spec.enum.includes(spec.default)) input.value = String(spec.enum.indexOf(spec.default));
    return [input, () => (input.value === "" ? undefined : spec.enum[Number(input.value)])];
  }
  if (spec.type === "boolean") {
    const input = el("input", { id, name, type: "checkbox", checked: spec.default === true });
    return [input, () => input.checked];
  }
  if (spec.type === "number" || spec.type === "integer") {
    const input = el("input", {
      id, name, type: "number", required: must, inputmode: spec.type === "integer" ? "numeric" : "decimal",
      step: spec.type === "integer" ? "1" : "any",
      min: spec.minimum ?? undefined, max: spec.maximum ?? undefined,
      value: spec.default ?? undefined,
    });
    return [input, () => (input.value === "" ? undefined : Number(input.value))];
  }
  const format = FORMAT_INPUTS[spec.format];
  const input = el("input", {
    id, name, type: format?.type ?? "text", required: must, step: format?.step,
    minlength: spec.minLength ?? undefined, maxlength: spec.maxLength ?? undefined,
    pattern: spec.pattern ?? undefined, value: spec.default ?? undefined,
  });
  return [input, () => (input.value === "" ? (must ? "" : undefined) : (format ? format.read(input.value) : input.value))];
}

function renderSchemaForm(card, send) {
  const { request, node } = card;
  const schema = request.schema;
  const required = new Set(schema.required || []);
  const form = el("form", { novalidate: true });
  const fields = [];
  for (const [name, spec] of Object.entries(schema.properties)) {
    const id = `f-${request.requestId}-${name}`;
    const label = spec.title || humanKey(name);
    const must = required.has(name);
    const [input, read] = fieldInput(id, name, spec, must);
    input.addEventListener("input", () => card.showError(""));
    fields.push({ name, label, input, read, boolean: spec.type === "boolean" });
    const help = spec.description ? el("small", { id: `${id}-help`, text: spec.description }) : null;
    if (help) input.setAttribute("aria-describedby", help.id);
    if (spec.type === "boolean") {
      form.append(el("div", { class: "field check" }, input, el("label", { for: id, text: label }), help));
    } else {
      form.append(el("div", { class: "field" }, el("label", { for: id, text: must ? `${label} (required)` : label }), input, help));
    }
  }
  card.firstInput = fields[0]?.input;
  form.append(actions(el("button", { type: "submit", class: "primary", text: "Submit" })));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send();
  });
  node.append(form);
  card.read = (explicit) => {
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
    return { response: { requestId: request.requestId, value } };
  };
}
