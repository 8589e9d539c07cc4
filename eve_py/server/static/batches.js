// eve-py browser chat: the batches of input requests a step parks on, each request a card (see
// requests.js), answered one by one or together with "Send answers". Loaded before chat.js.
"use strict";

// --- input requests ----------------------------------------------------------------------------

// eve-py's request: eve's InputRequest with `kind`, `display`, `schema`, `editSchema` and
// `expiresAt` taken from `input.requested`'s `extensions[requestId]` when there is one (client
// tools, elicitations, forms, typed pickers, editable approvals, requests with a deadline).
function mergeRequest(request, extension) {
  const merged = { ...request };
  if (extension) {
    merged.kind = extension.kind ?? merged.kind;
    merged.display = extension.display ?? merged.display;
    if (extension.schema) merged.schema = extension.schema;
    if (extension.editSchema) merged.editSchema = extension.editSchema;
    if (extension.expiresAt) merged.expiresAt = extension.expiresAt;
  } else {
    merged.kind = request.kind === "tool-approval" ? "tool-approval" : "question"; // session-limit: a question
  }
  merged.display ??= request.options?.length ? "select" : "text";
  return merged;
}

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
      const refused = failure.requestId ? batch.cards.get(failure.requestId) : null;
      if (!refused) {
        error.textContent = `Not sent: ${failure.message}`;
        error.hidden = false;
      }
      refreshControls(batch);
      // A refusal naming a request is shown on its card (its controls enabled again first, so the
      // field it names can take the focus).
      if (refused) refused.showError(`Not sent: ${failure.message}`, refused.refusedControl(failure.message));
      return;
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
  for (const card of batch.cards.values()) card.closed();
  setControls(batch, false);
  batch.node.classList.add("closed");
  batch.node.append(el("p", { class: "answered", text: note }));
  state.batches = state.batches.filter((b) => b !== batch);
}

// `input.resolved`: each resolved request is closed and says how it ended, what was chosen and who
// chose it; a batch closes once all of its are.
function resolveRequests(resolutions) {
  for (const resolution of resolutions) {
    for (const batch of state.batches) {
      const card = batch.cards.get(resolution.requestId);
      if (!card) continue;
      batch.outcomes.set(resolution.requestId, resolution.outcome);
      batch.sent.delete(resolution.requestId);
      card.node.dataset.outcome = resolution.outcome;
      card.status.textContent = outcomeText(card.request, resolution);
      card.showError("");
      card.closed();
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
    } else if (outcomes.every((outcome) => outcome === "expired")) {
      closeBatch(batch, "Expired: nobody answered in time.");
    } else if (outcomes.every((outcome) => outcome === "ignored")) {
      closeBatch(batch, batch.dismissed ? "Skipped: a new message was sent instead." : "Skipped.");
    } else {
      closeBatch(batch, "Answered.");
    }
  }
}
