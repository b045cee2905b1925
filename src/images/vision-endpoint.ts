/**
 * Client for an optional OpenAI-compatible vision endpoint (a site's own Ollama, llama.cpp
 * server, vLLM, …): describing an image and filling a JSON Schema from it through
 * `POST {baseUrl}/chat/completions`. Mediabox never needs one; when a site configures it, the
 * pipeline uses it for the fields local models cannot answer. Downscaling the image first and
 * deciding when to call are the caller's job.
 */

export interface VisionEndpointConfig {
  /** Up to and including the API version, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Whole request, including reading the answer. Default 120 s: local models on CPU are slow. */
  timeoutMs?: number;
}

/**
 * A failed call. status is the HTTP status the endpoint answered with, or null when no answer
 * came (timeout, connection refused) or the model's text itself is unusable.
 */
export class VisionEndpointError extends Error {
  override name = "VisionEndpointError";
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DESCRIBE_PROMPT =
  "Describe this image in detail: the subject, the setting, notable objects, people, colours and any legible text.";
/** How much of an unusable answer goes into an error message. */
const SNIPPET = 300;

type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

interface ChatRequest {
  model: string;
  messages: { role: "user"; content: ContentPart[] }[];
  temperature: number;
  response_format?: unknown;
}

interface ChatAnswer {
  text: string;
  model: string;
  finishReason: string | null;
}

export class VisionEndpoint {
  private readonly url: string;

  constructor(private readonly cfg: VisionEndpointConfig) {
    this.url = `${cfg.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  }

  async describe(image: Buffer, mime: string, prompt?: string): Promise<{ text: string; model: string }> {
    const answer = await this.chat(this.request(image, mime, prompt ?? DESCRIBE_PROMPT));
    return { text: answer.text.trim(), model: answer.model };
  }

  /**
   * The schema goes both into response_format (servers that support structured output constrain
   * decoding to it) and into the prompt (servers that ignore response_format still see it).
   */
  async extractJson(image: Buffer, mime: string, schema: object, hint?: string): Promise<unknown> {
    const prompt = [
      hint?.trim() || "Extract the information described by the JSON Schema below from this image.",
      "Answer with a single JSON value that validates against this JSON Schema, and nothing else.",
      "Use null for anything the image does not show.",
      JSON.stringify(schema),
    ].join("\n\n");
    const request = this.request(image, mime, prompt);
    request.response_format = { type: "json_schema", json_schema: { name: "extraction", schema, strict: true } };
    const answer = await this.chat(request);
    if (answer.finishReason === "length") {
      throw new VisionEndpointError(`the model's answer was cut off at its token limit: ${snippet(answer.text)}`, null);
    }
    return parseJsonAnswer(answer.text);
  }

  private request(image: Buffer, mime: string, text: string): ChatRequest {
    const url = `data:${mime};base64,${image.toString("base64")}`;
    return {
      model: this.cfg.model,
      messages: [{ role: "user", content: [{ type: "text", text }, { type: "image_url", image_url: { url } }] }],
      temperature: 0,
    };
  }

  private async chat(body: ChatRequest): Promise<ChatAnswer> {
    const timeoutMs = this.cfg.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (this.cfg.apiKey) headers.authorization = `Bearer ${this.cfg.apiKey}`;
    let response: Response;
    let raw: string;
    try {
      response = await fetch(this.url, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
      raw = await response.text();
    } catch (error) {
      throw transportError(error, this.url, timeoutMs);
    }
    if (!response.ok) {
      throw new VisionEndpointError(`vision endpoint answered ${response.status}: ${serverMessage(raw) || response.statusText}`, response.status);
    }
    return readAnswer(raw, body.model, response.status);
  }
}

function transportError(error: unknown, url: string, timeoutMs: number): VisionEndpointError {
  const name = (error as Error)?.name;
  if (name === "TimeoutError" || name === "AbortError") {
    return new VisionEndpointError(`vision endpoint did not answer within ${timeoutMs} ms`, null);
  }
  return new VisionEndpointError(`vision endpoint ${url} unreachable: ${(error as Error)?.message ?? String(error)}`, null);
}

/** OpenAI sends {error: {message}}, Ollama and llama.cpp {error: "..."} or plain text. */
function serverMessage(raw: string): string {
  try {
    const body = JSON.parse(raw) as { error?: unknown; message?: unknown; detail?: unknown };
    const error = body.error;
    if (typeof error === "string") return error;
    if (error && typeof error === "object" && typeof (error as { message?: unknown }).message === "string") {
      return (error as { message: string }).message;
    }
    if (typeof body.message === "string") return body.message;
    if (typeof body.detail === "string") return body.detail;
  } catch {
    // not JSON: the text itself is the message
  }
  return snippet(raw.trim());
}

function readAnswer(raw: string, requestedModel: string, status: number): ChatAnswer {
  let body: { model?: unknown; choices?: { message?: { content?: unknown }; finish_reason?: unknown }[] };
  try {
    body = JSON.parse(raw);
  } catch {
    throw new VisionEndpointError(`vision endpoint sent a response that is not JSON: ${snippet(raw)}`, status);
  }
  const choice = body.choices?.[0];
  const text = contentText(choice?.message?.content);
  if (text === null) throw new VisionEndpointError(`vision endpoint sent no message content: ${snippet(raw)}`, status);
  return {
    text,
    model: typeof body.model === "string" && body.model ? body.model : requestedModel,
    finishReason: typeof choice?.finish_reason === "string" ? choice.finish_reason : null,
  };
}

// Most servers answer a string; some send the content as parts like the request's.
function contentText(content: unknown): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const texts = content.filter((p) => p && typeof p.text === "string").map((p) => p.text as string);
  return texts.length > 0 ? texts.join("") : null;
}

/**
 * Models without constrained decoding wrap JSON in ```json fences or a sentence; the fence's
 * body, then the outermost {...} or [...], is tried after the plain text.
 */
export function parseJsonAnswer(text: string): unknown {
  const candidates = [text.trim()];
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text);
  if (fenced?.[1]) candidates.push(fenced[1].trim());
  const start = text.search(/[{[]/);
  const end = Math.max(text.lastIndexOf("}"), text.lastIndexOf("]"));
  if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate);
    } catch {
      // try the next reading
    }
  }
  throw new VisionEndpointError(`the model's answer is not JSON: ${snippet(text)}`, null);
}

function snippet(text: string): string {
  return text.length > SNIPPET ? `${text.slice(0, SNIPPET)}…` : text;
}
