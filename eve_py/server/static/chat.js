// eve-py browser chat: talks to the session API under /eve/v1 (vercel/eve 0.80.1's wire), shows
// the conversation and wires the page. No build step, no dependencies. The other scripts, loaded
// before this one: requests.js (a request's card), batches.js (a step's batch of cards),
// activity.js (a running tool's progress and log), stream.js (following the NDJSON event stream),
// content.js (a result's images, audio, resources).
"use strict";

const API = "/v26/eve/v1";

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
    case "action.progress":
    case "action.log":
      showReport(event); // activity.js: under the call's card, once (it may have come live)
      break;
    case "action.result": {
      // A tool's result in words: its output's fields as rows, a failure's message as text;
      // content blocks (content.js) as text, images, audio and resources.
      endActivity(data);
      const result = data.result || {};
      const failed = result.isError || (data.status && data.status !== "completed");
      const mark = data.status === "rejected" ? "⊘" : failed ? "✗" : "↳";
      const verb = data.status === "rejected" ? "did not run" : failed ? "failed" : "returned";
      add(el("div", { class: failed ? "tool error" : "tool", "data-status": data.status },
        el("span", { class: "tool-head", text: `${mark} ${result.toolName} ${verb}` }),
        (!failed && contentView(result.output, result.toolName)) || valueView(result.output, `${result.toolName} result`)));
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
  forgetActivity();
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

// --- wiring ------------------------------------------------------------------------------------

async function start() {
  $("composer").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("message").value.trim();
    if (!text) return;
    // A message withdraws the open questions: never those showing an answer not sent yet.
    const unsent = state.batches.flatMap((batch) => openCards(batch)).filter((card) => !card.skipped && !card.read(false).empty);
    if (unsent.length) {
      setStatus("waiting", "Your answer above is not sent yet: send it (or clear it, or press Skip) before a new message.");
      unsent[0].focus();
      return;
    }
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
