/**
 * pdf.js in this process: its module, imported once, and the documents opened with it (the
 * options read-pdf.ts and render-page.ts share, and the worker each document runs on).
 *
 * pdf.js runs its worker side in this thread (there is no worker thread in Node), and its own
 * stand-in port (LoopbackPort) passes each message through structuredClone. That cost ~8% of
 * reading a text PDF: the text layer arrives as a stream of chunks of small objects, and Bun's
 * structuredClone serializes each one. Each document here gets a worker on a port of its own that
 * copies plain objects and arrays in JavaScript (several times faster) and leaves everything
 * else (typed arrays, errors, messages that transfer buffers) to structuredClone. Messages must
 * still be copied: pdf.js reuses what it posted (the text layer's chunk gets fresh item arrays
 * after it is sent, the operator list's arrays are emptied in place), so passing them by
 * reference hands the other side emptied chunks.
 */
import { DOCUMENT_LIMITS } from "./document-limits.ts";
import { pdfStandardFontsDir } from "../native/packages.ts";

export type PdfJs = typeof import("pdfjs-dist/legacy/build/pdf.mjs");
export type PdfLoadingTask = ReturnType<PdfJs["getDocument"]>;
export type PdfDocument = Awaited<PdfLoadingTask["promise"]>;
export type PdfPage = Awaited<ReturnType<PdfDocument["getPage"]>>;

let pdfjsLoad: Promise<PdfJs> | null = null;
export const loadPdfJs = () => {
  pdfjsLoad ??= import("pdfjs-dist/legacy/build/pdf.mjs").catch((err: unknown) => {
    pdfjsLoad = null;
    throw err;
  });
  return pdfjsLoad;
};

interface WorkerMessageHandler {
  initializeFromPort(port: object): void;
}

/**
 * pdf.js's worker module, found as pdf.js finds it for its own in-process worker (so the compiled
 * binary's embedded copy, see scripts/build.ts, serves both).
 */
async function workerMessageHandler(pdfjs: PdfJs): Promise<WorkerMessageHandler> {
  return (pdfjs.PDFWorker as unknown as { _setupFakeWorkerGlobal: Promise<WorkerMessageHandler> })._setupFakeWorkerGlobal;
}

/** Plain data nests no deeper than this in pdf.js's messages; deeper (or cyclic) goes to structuredClone. */
const MAX_DEPTH = 64;
class TooDeep extends Error {}

/**
 * A copy of plain objects, class instances and arrays; anything else (typed arrays, errors, maps)
 * as structuredClone copies it. Primitives are taken as they are without a call (most values are).
 */
function copy(value: object, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new TooDeep();
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyValue(value[i], depth);
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  const out: Record<string, unknown> = proto === null ? Object.create(null) : {};
  if (proto === Object.prototype || proto === null) {
    // for-in over a plain object: its own enumerable keys (Object.keys would allocate an array per object).
    for (const key in value) out[key] = copyValue((value as Record<string, unknown>)[key], depth);
    return out;
  }
  // Built-in kinds (typed arrays, errors, maps, dates) tag themselves: structuredClone knows them.
  if (Object.prototype.toString.call(value) !== "[object Object]") return structuredClone(value);
  // An instance of an ordinary class (pdf.js's Ref, one for every page): a plain object of its own
  // properties, as structuredClone makes it.
  for (const key of Object.keys(value)) out[key] = copyValue((value as Record<string, unknown>)[key], depth);
  return out;
}

const copyValue = (v: unknown, depth: number): unknown => (typeof v === "object" && v !== null ? copy(v, depth + 1) : v);

function copyMessage(message: unknown): unknown {
  try {
    return copyValue(message, -1);
  } catch (err) {
    if (err instanceof TooDeep) return structuredClone(message);
    throw err;
  }
}

type Listener = (event: { data: unknown }) => void;

/**
 * Both ends of a document's channel, as LoopbackPort is: every listener sees every message (pdf.js's
 * message handlers keep those addressed to them), delivered asynchronously, as from a real worker.
 */
class CopyingPort {
  #listeners = new Set<Listener>();
  #deferred = Promise.resolve();

  postMessage(message: unknown, transfer?: Transferable[] | null) {
    // Transferred buffers are detached from the sender as with a real worker: pdf.js may count on it.
    const event = { data: transfer?.length ? structuredClone(message, { transfer }) : copyMessage(message) };
    void this.#deferred.then(() => {
      for (const listener of this.#listeners) listener.call(this, event);
    });
  }

  addEventListener(_type: string, listener: Listener, options?: { signal?: AbortSignal }) {
    const signal = options?.signal;
    if (signal?.aborted) return;
    this.#listeners.add(listener);
    signal?.addEventListener("abort", () => this.#listeners.delete(listener), { once: true });
  }

  removeEventListener(_type: string, listener: Listener) {
    this.#listeners.delete(listener);
  }

  terminate() {
    this.#listeners.clear();
  }
}

export interface OpenedPdf {
  task: PdfLoadingTask;
  /** Destroys the document and its worker; never rejects. */
  close(): Promise<void>;
}

/**
 * Opens a PDF on a worker of its own (a broken document takes nothing else down with it). pdf.js
 * takes ownership of (detaches) the buffer it is given: it gets a copy (Buffer#slice would be a view). The 14 standard fonts' data is read from
 * pdf.js's package (never the network): the text layer's font metrics (ascent, descent) come from it.
 */
export async function openPdf(bytes: Uint8Array): Promise<OpenedPdf> {
  const pdfjs = await loadPdfJs();
  const handler = await workerMessageHandler(pdfjs);
  const port = new CopyingPort();
  const worker = new pdfjs.PDFWorker({ port: port as never, verbosity: 0 });
  handler.initializeFromPort(port);
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes),
    worker,
    standardFontDataUrl: pdfStandardFontsDir(),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    // Larger images are left out of the page (never decoded): a 30000 x 30000 picture would take 3.6 GB.
    maxImageSize: DOCUMENT_LIMITS.pdf.maxImagePixels,
    verbosity: 0,
  });
  return {
    task,
    async close() {
      await task.destroy().catch(() => {});
      worker.destroy();
      port.terminate();
    },
  };
}
