/**
 * A process that owns a DocumentReader and nothing else, for test/document-limits.test.ts: it
 * reads one small text so the reader child is running, prints `{"child": <pid>}` and waits to be
 * killed. The test kills it with SIGKILL (no exit hooks run) and expects the child to go too.
 */
import { DocumentReader } from "../../src/documents/document-reader.ts";

const reader = new DocumentReader({
  textThreadBytes: 0, // small text would be read on a thread, and no child would start
  memoryBudgetBytes: 1024 * 1024 * 1024,
  ocr: { recognize: async () => ({ text: "", regions: [] }) },
});
await reader.read(new TextEncoder().encode("A line of text so the reader child starts.\n"), "txt");
process.stdout.write(`${JSON.stringify({ child: reader.pid })}\n`);
setInterval(() => {}, 60_000);
