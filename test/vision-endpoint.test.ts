import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { VisionEndpoint, VisionEndpointError, parseJsonAnswer } from "../src/images/vision-endpoint.ts";

/** What the fake server saw, and how it should answer the next request. */
interface Seen {
  method: string;
  path: string;
  auth: string | null;
  body: any;
}

let seen: Seen[] = [];
let reply: (body: any) => Response | Promise<Response> = () => new Response("unset", { status: 500 });
let server: ReturnType<typeof Bun.serve>;
let baseUrl: string;

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = await req.json().catch(() => null);
      seen.push({ method: req.method, path: new URL(req.url).pathname, auth: req.headers.get("authorization"), body });
      return reply(body);
    },
  });
  baseUrl = `http://127.0.0.1:${server.port}/v1`;
});
afterAll(() => server.stop(true));

const openAi = (content: unknown, extra: Record<string, unknown> = {}) =>
  Response.json({
    id: "chatcmpl-1",
    object: "chat.completion",
    model: "llava:13b-served",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    ...extra,
  });

const IMAGE = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 5]);
const SCHEMA = { type: "object", properties: { total: { type: "number" } }, required: ["total"] };

function fresh(answer: typeof reply) {
  seen = [];
  reply = answer;
}

async function failure(promise: Promise<unknown>): Promise<VisionEndpointError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(VisionEndpointError);
    return error as VisionEndpointError;
  }
  throw new Error("expected the call to fail");
}

describe("describe", () => {
  test("sends the image as a base64 data URL with the model, key and prompt", async () => {
    fresh(() => openAi("  A red brick house with a garden.  "));
    const endpoint = new VisionEndpoint({ baseUrl: `${baseUrl}/`, model: "llava:13b", apiKey: "sk-local" });
    const result = await endpoint.describe(IMAGE, "image/jpeg", "What is this?");
    expect(result).toEqual({ text: "A red brick house with a garden.", model: "llava:13b-served" });

    expect(seen).toHaveLength(1);
    const [request] = seen;
    expect(request!.method).toBe("POST");
    expect(request!.path).toBe("/v1/chat/completions"); // trailing slash of baseUrl tolerated
    expect(request!.auth).toBe("Bearer sk-local");
    expect(request!.body).toEqual({
      model: "llava:13b",
      temperature: 0,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: `data:image/jpeg;base64,${IMAGE.toString("base64")}` } },
          ],
        },
      ],
    });
    expect(request!.body.response_format).toBeUndefined();
  });

  test("no Authorization header without a key; default prompt; model falls back to the configured one", async () => {
    fresh(() => Response.json({ choices: [{ message: { content: [{ type: "text", text: "A cat." }] } }] }));
    const result = await new VisionEndpoint({ baseUrl, model: "moondream" }).describe(IMAGE, "image/png");
    expect(result).toEqual({ text: "A cat.", model: "moondream" });
    expect(seen[0]!.auth).toBeNull();
    expect(seen[0]!.body.messages[0].content[0].text).toStartWith("Describe this image");
  });
});

describe("extractJson", () => {
  test("asks for structured output and parses the answer", async () => {
    fresh(() => openAi('{"total": 1250.5}'));
    const endpoint = new VisionEndpoint({ baseUrl, model: "qwen2.5-vl" });
    expect(await endpoint.extractJson(IMAGE, "image/webp", SCHEMA, "Read the invoice total")).toEqual({ total: 1250.5 });
    const body = seen[0]!.body;
    expect(body.response_format).toEqual({ type: "json_schema", json_schema: { name: "extraction", schema: SCHEMA, strict: true } });
    const prompt: string = body.messages[0].content[0].text;
    expect(prompt).toStartWith("Read the invoice total");
    expect(prompt).toContain(JSON.stringify(SCHEMA));
    expect(body.messages[0].content[1].image_url.url).toStartWith("data:image/webp;base64,");
  });

  test("tolerates ```json fences and surrounding prose", async () => {
    const endpoint = new VisionEndpoint({ baseUrl, model: "m" });
    fresh(() => openAi('```json\n{"total": 3}\n```'));
    expect(await endpoint.extractJson(IMAGE, "image/png", SCHEMA)).toEqual({ total: 3 });
    fresh(() => openAi('Here you go:\n```\n{"total": 4}\n```\nAnything else?'));
    expect(await endpoint.extractJson(IMAGE, "image/png", SCHEMA)).toEqual({ total: 4 });
    fresh(() => openAi('The answer is {"total": 5}.'));
    expect(await endpoint.extractJson(IMAGE, "image/png", SCHEMA)).toEqual({ total: 5 });
  });

  test("an answer that is not JSON, or cut off, is an error", async () => {
    const endpoint = new VisionEndpoint({ baseUrl, model: "m" });
    fresh(() => openAi("I cannot read this image."));
    expect((await failure(endpoint.extractJson(IMAGE, "image/png", SCHEMA))).message).toBe("the model's answer is not JSON: I cannot read this image.");
    fresh(() => Response.json({ choices: [{ message: { content: '{"total": 1' }, finish_reason: "length" }] }));
    expect((await failure(endpoint.extractJson(IMAGE, "image/png", SCHEMA))).message).toContain("cut off at its token limit");
    expect(() => parseJsonAnswer("")).toThrow(VisionEndpointError);
  });
});

describe("errors", () => {
  test("HTTP errors carry the status and the server's message", async () => {
    const endpoint = new VisionEndpoint({ baseUrl, model: "m" });
    fresh(() => Response.json({ error: { message: "model 'm' not found", type: "invalid_request_error" } }, { status: 404 }));
    const openAiStyle = await failure(endpoint.describe(IMAGE, "image/png"));
    expect(openAiStyle.status).toBe(404);
    expect(openAiStyle.message).toBe("vision endpoint answered 404: model 'm' not found");

    fresh(() => Response.json({ error: "out of memory" }, { status: 500 }));
    expect((await failure(endpoint.describe(IMAGE, "image/png"))).message).toBe("vision endpoint answered 500: out of memory");

    fresh(() => new Response("Bad Gateway from proxy", { status: 502 }));
    const plain = await failure(endpoint.extractJson(IMAGE, "image/png", SCHEMA));
    expect(plain.status).toBe(502);
    expect(plain.message).toBe("vision endpoint answered 502: Bad Gateway from proxy");
  });

  test("a response without choices is an error", async () => {
    fresh(() => Response.json({ object: "chat.completion", choices: [] }));
    const error = await failure(new VisionEndpoint({ baseUrl, model: "m" }).describe(IMAGE, "image/png"));
    expect(error.status).toBe(200);
    expect(error.message).toStartWith("vision endpoint sent no message content");
  });

  test("times out with AbortSignal.timeout", async () => {
    fresh(async () => {
      await Bun.sleep(1000);
      return openAi("too late");
    });
    const started = performance.now();
    const error = await failure(new VisionEndpoint({ baseUrl, model: "m", timeoutMs: 100 }).describe(IMAGE, "image/png"));
    expect(performance.now() - started).toBeLessThan(900);
    expect(error.status).toBeNull();
    expect(error.message).toBe("vision endpoint did not answer within 100 ms");
  });

  test("an unreachable endpoint is an error without status", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const url = `http://127.0.0.1:${closed.port}/v1`;
    await closed.stop(true);
    const error = await failure(new VisionEndpoint({ baseUrl: url, model: "m", timeoutMs: 2000 }).describe(IMAGE, "image/png"));
    expect(error.status).toBeNull();
    expect(error.message).toStartWith(`vision endpoint ${url}/chat/completions unreachable:`);
  });
});
