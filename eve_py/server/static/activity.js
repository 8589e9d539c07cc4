// eve-py browser chat: a running tool's progress and log lines (`action.progress`, `action.log`),
// under a card per call: a progress bar with "2 of 3: message", then the log lines. The stream asks
// for them live (`live=1`): each comes first as a live record, then stored with the call's result;
// a report is shown once, by its event id, whichever copy comes first. Loaded before chat.js.
"use strict";

const activity = {
  shown: new Set(), // event ids of the reports shown
  calls: new Map(), // toolCallId -> its card's parts
};

function forgetActivity() {
  activity.shown.clear();
  activity.calls.clear();
}

// The card of a call, made on its first report.
function activityCard(data) {
  let card = activity.calls.get(data.toolCallId);
  if (card) return card;
  const name = data.toolName;
  const bar = el("progress", { "aria-label": `${name} progress`, hidden: true });
  const text = el("span", { class: "activity-text" });
  const log = el("ul", { class: "activity-log", "aria-label": `${name} log`, hidden: true });
  const head = el("span", { class: "tool-head", text: `⋯ ${name} is running` });
  const node = add(el("div", { class: "activity", role: "group", "aria-label": `${name}: progress and log` },
    head, el("div", { class: "activity-progress" }, bar, text), log));
  card = { node, head, bar, text, log, name };
  activity.calls.set(data.toolCallId, card);
  return card;
}

function number(value) {
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 100) / 100);
}

// One report (live or stored), shown unless it was shown already.
function showReport(event) {
  const id = event.meta?.id;
  if (id && activity.shown.has(id)) return;
  if (id) activity.shown.add(id);
  const data = event.data || {};
  const card = activityCard(data);
  if (event.type === "action.progress") {
    const total = typeof data.total === "number" && data.total > 0 ? data.total : null;
    if (total !== null) {
      card.bar.max = total;
      card.bar.value = Math.min(data.progress, total);
    } else {
      card.bar.removeAttribute("value"); // indeterminate: the tool does not know how much is left
    }
    card.bar.hidden = false;
    const done = total !== null ? `${number(data.progress)} of ${number(total)}` : number(data.progress);
    card.text.textContent = data.message ? `${done}: ${data.message}` : done;
  } else {
    const entry = typeof data.data === "string" ? data.data : JSON.stringify(data.data);
    const who = data.logger ? ` ${data.logger}` : "";
    card.log.append(el("li", { class: `level-${data.level}`, text: `[${data.level}]${who}: ${entry}` }));
    card.log.hidden = false;
  }
  scrollDown();
}

// The call ended (its `action.result`): its card stays, marked done.
function endActivity(data) {
  const card = activity.calls.get(data.result?.callId ?? data.toolCallId);
  if (!card) return;
  card.node.classList.add("done");
  card.head.textContent = `${card.name} ran`;
}
