// eve-py answer page: the one input request an answer link names (GET|POST /eve/v1/answer/{token},
// no API token), shown as the browser chat's own card (requests.js), answered once, then its
// outcome. The page's own address is the link: it reads and answers `location.pathname`.
"use strict";

const $ = (id) => document.getElementById(id);

// What a refused link tells the person holding it, by the server's error code.
const REFUSALS = {
  link_invalid: "This link is not valid: it may have been cut short when it was copied. Ask for a new one.",
  link_expired: "This link has expired. Ask for a new one if the question is still open.",
  request_already_answered: "This question was already answered (or withdrawn): there is nothing left to do here.",
  request_expired: "This question expired before it was answered.",
  unknown_request: "This question is no longer open.",
  session_not_found: "The conversation this question belonged to is gone.",
};

// One call on the link; the server's error body becomes an Error with its `code` and `status`.
async function onLink(method, body) {
  const headers = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(location.pathname, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(typeof data.error === "string" && data.error ? data.error : `HTTP ${response.status}`);
    Object.assign(error, { code: data.code, status: response.status });
    throw error;
  }
  return data;
}

function notice(text, kind) {
  return $("answer").appendChild(el("p", { class: `notice ${kind}`, role: kind === "refused" ? "alert" : "status", text }));
}

function setEnabled(section, enabled) {
  for (const control of section.querySelectorAll("button, input, select, textarea")) control.disabled = !enabled;
}

// The request was answered here: the card says how it ended (as the chat says it), and closes.
function finish(section, card, resolution) {
  section.classList.add("closed");
  setEnabled(section, false);
  card.node.dataset.outcome = resolution.outcome;
  card.status.textContent = outcomeText(card.request, { ...resolution, answeredBy: undefined });
  card.closed();
  notice("Thank you: your answer was recorded. You can close this page.", "done");
}

function ask(linked) {
  const { request } = linked;
  document.title = `${request.prompt} · eve-py`;
  const section = el("section", { class: "batch", "aria-label": "The agent needs your input" });
  let card = null;
  const answer = async (response) => {
    setEnabled(section, false);
    try {
      const accepted = await onLink("POST", response);
      finish(section, card, accepted.resolution ?? { outcome: "answered", response });
    } catch (error) {
      if (error.status === 400 || error.status === 422) {
        // The answer does not fit: the card stays open as it was, saying why.
        setEnabled(section, true);
        card.showError(`Not sent: ${error.message}`, card.refusedControl(error.message));
        return;
      }
      section.classList.add("closed");
      card.closed();
      notice(REFUSALS[error.code] ?? `Not sent: ${error.message}`, "refused");
    }
  };
  card = renderRequest(request, answer, true);
  section.append(card.node);
  $("answer").append(section);
  if (linked.expiresAt && linked.expiresAt !== request.expiresAt) {
    const line = deadlineView(linked.expiresAt, "on this link");
    line.classList.add("link-expiry");
    $("answer").append(line);
  }
  card.focus();
}

async function start() {
  fetch("/eve/v1/health")
    .then((response) => response.json())
    .then((health) => {
      $("agent-name").textContent = String(health.workflowId ?? "").replace(/^eve-py:/, "");
    })
    .catch(() => {});
  let linked;
  try {
    linked = await onLink("GET");
  } catch (error) {
    $("loading").remove();
    notice(REFUSALS[error.code] ?? `This question cannot be shown: ${error.message}`, "refused");
    return;
  }
  $("loading").remove();
  ask(linked);
}

start();
