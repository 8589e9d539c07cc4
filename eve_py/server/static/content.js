// eve-py browser chat: a tool result made of content blocks (MCP's shapes, as
// eve_py.protocol.content stores them) shown as what they are: text, images, audio players,
// embedded resources. Uses el() from requests.js.
"use strict";

// Each block type's keys; an output is content only when every item has exactly these (as
// content_from_json decides in Python), so JSON data that merely looks alike stays data.
const BLOCK_KEYS = {
  text: ["text"],
  image: ["data", "mimeType"],
  audio: ["data", "mimeType"],
  resource: ["resource"],
};

function isBlock(block) {
  if (!block || typeof block !== "object" || !Object.hasOwn(BLOCK_KEYS, block.type)) return false;
  const keys = Object.keys(block).filter((key) => key !== "type");
  const wanted = BLOCK_KEYS[block.type];
  if (keys.length !== wanted.length || !wanted.every((key) => typeof block[key] === (key === "resource" ? "object" : "string"))) {
    return false;
  }
  if (block.type !== "resource") return true;
  const resource = block.resource || {};
  return typeof resource.uri === "string" && (typeof resource.text === "string" || typeof resource.blob === "string");
}

function dataUrl(mimeType, base64) {
  return `data:${mimeType || "application/octet-stream"};base64,${base64}`;
}

function byteSize(base64) {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}

// The output's view when it is content blocks, else null. Images are described by the result's
// text blocks (or, without any, by the tool's name), so a screen reader says what they show.
function contentView(output, toolName) {
  if (!Array.isArray(output) || !output.length || !output.every(isBlock)) return null;
  const caption = output.filter((block) => block.type === "text").map((block) => block.text).join(" ").trim();
  const images = output.filter((block) => block.type === "image").length;
  let image = 0;
  const alt = () => {
    image += 1;
    const what = caption || `Image from ${toolName}`;
    return images > 1 ? `${what} (image ${image} of ${images})` : what;
  };
  const view = el("div", { class: "content", "aria-label": `${toolName} result` });
  for (const block of output) {
    if (block.type === "text") {
      view.append(el("p", { class: "content-text", text: block.text }));
    } else if (block.type === "image") {
      view.append(el("img", { src: dataUrl(block.mimeType, block.data), alt: alt() }));
    } else if (block.type === "audio") {
      view.append(el("audio", { controls: true, src: dataUrl(block.mimeType, block.data), "aria-label": `Audio from ${toolName}` }));
    } else {
      view.append(resourceView(block.resource, toolName));
    }
  }
  return view;
}

// An embedded resource: its text under its URI, an image, or a link to save its bytes.
function resourceView(resource, toolName) {
  if (typeof resource.text === "string") {
    return el("figure", { class: "content-resource" },
      el("figcaption", { text: resource.uri }),
      el("pre", { text: resource.text }));
  }
  if ((resource.mimeType || "").startsWith("image/")) {
    return el("img", { src: dataUrl(resource.mimeType, resource.blob), alt: `${resource.uri} from ${toolName}` });
  }
  const type = resource.mimeType || "application/octet-stream";
  return el("a", {
    class: "content-resource",
    href: dataUrl(type, resource.blob),
    download: resource.uri.split("/").pop() || "resource",
    text: `${resource.uri} (${type}, ${byteSize(resource.blob).toLocaleString("en")} bytes)`,
  });
}
