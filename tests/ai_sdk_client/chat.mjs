// The AI SDK's own chat client (npm package ai, 7.x): AbstractChat with DefaultChatTransport, in Node
// without React. useChat runs this same class in the browser; `Chat` here only keeps its state.
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from "ai";

class ChatState {
  status = "ready";
  error = undefined;
  messages = [];
  pushMessage = (message) => {
    this.messages = this.messages.concat(message);
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = [...this.messages.slice(0, index), this.snapshot(message), ...this.messages.slice(index + 1)];
  };
  snapshot = (thing) => structuredClone(thing);
}

export class Chat extends AbstractChat {
  #finished = [];

  /** `onRequest` (optional) is called for each request the chat sends; `onData` with each data part. */
  constructor({ url, token, id, onRequest = () => {}, onData }) {
    super({
      id,
      onData,
      state: new ChatState(),
      transport: new DefaultChatTransport({
        api: `${url}/ai-sdk/chat`,
        headers: { authorization: `Bearer ${token}` },
        fetch: (input, init) => {
          onRequest();
          return fetch(input, init);
        },
      }),
      // Send again by itself once every open tool call has its output, or every approval its decision.
      sendAutomaticallyWhen: (options) =>
        lastAssistantMessageIsCompleteWithToolCalls(options) || lastAssistantMessageIsCompleteWithApprovalResponses(options),
      onFinish: () => this.#finished.splice(0).forEach((resolve) => resolve()),
    });
  }

  /** Resolves when the next response (a request the chat sends by itself, too) has finished. */
  nextFinish() {
    return new Promise((resolve) => this.#finished.push(resolve));
  }

  /** The last assistant message's tool parts and text. */
  get reply() {
    const message = this.messages.findLast((m) => m.role === "assistant");
    const parts = message?.parts ?? [];
    return {
      text: parts.filter((p) => p.type === "text").map((p) => p.text).join(""),
      tools: parts.filter((p) => p.type.startsWith("tool-")),
      assistantMessages: this.messages.filter((m) => m.role === "assistant").length,
    };
  }
}
