/**
 * Preparing the built-in text model's vocabulary in the background after start: every piece of
 * USE's vocabulary (~8,000, from which other words are composed), then the common-word list
 * (MEDIABOX_TEXT_VOCABULARY_WORDS words, most common first), so a fresh install's first bulk
 * import finds its words' vectors, or their pieces', stored instead of paying model time. The
 * work is done once per data directory (a restart only checks which words are stored), gives
 * way to every text waiting for the model (UseSifEmbedder.prepareWords), pauses while files are
 * being analysed (jobs/background-work.ts) and runs on a thread of the idle scheduling class: on
 * a busy machine it waits for a quiet one instead of competing with a newcomer's first uploads.
 * GET /readyz shows its progress.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "../log.ts";
import { errorMessage } from "../errors.ts";
import { BUILTIN_TEXT_MODEL, type UseSifEmbedder } from "./use-sif-embedder.ts";
import type { BackgroundWork } from "../jobs/background-work.ts";

/** The work starts this long after the server: start-up and the first requests go first. */
const START_AFTER_MS = 5_000;

export class VocabularyPreparation {
  /**
   * Words of the list not stored yet, as last counted (the setting's figure until the list is
   * counted, which happens once the pieces are done; 0 when done, off or failed).
   */
  pendingWords: number;
  private readonly abort = new AbortController();
  readonly finished: Promise<void>;

  constructor(
    embedder: UseSifEmbedder,
    words: number,
    log: Logger,
    private readonly background: BackgroundWork,
  ) {
    this.pendingWords = Math.max(0, words);
    this.finished = this.run(embedder, words, log).finally(() => embedder.endPreparation());
  }

  private async run(embedder: UseSifEmbedder, limit: number, log: Logger): Promise<void> {
    if (limit <= 0) return;
    const piecesTask = this.background.preparing("vocabulary pieces", BUILTIN_TEXT_MODEL);
    const wordsTask = this.background.preparing("common words", BUILTIN_TEXT_MODEL);
    wordsTask.progress(0, limit);
    const signal = this.abort.signal;
    const pause = () => this.background.idle(signal);
    try {
      await delay(START_AFTER_MS, undefined, { signal, ref: false }).catch(() => {});
      if (signal.aborted) {
        this.pendingWords = 0;
        return;
      }
      const started = performance.now();
      let piecesTotal = 0;
      const pieces = await embedder.preparePieces({
        signal,
        pause,
        idle: true,
        onProgress: (left) => piecesTask.progress((piecesTotal ||= left) - left, piecesTotal),
      });
      piecesTask.end();
      // The embedder's own list (read once, a file per turn), not a second read of the files.
      const list = [...(await embedder.listedWords())].slice(0, limit);
      let wordsTotal = 0;
      const prepared = signal.aborted ? 0 : await embedder.prepareWords(list, {
        signal,
        pause,
        idle: true,
        onProgress: (left) => {
          this.pendingWords = left;
          wordsTask.progress((wordsTotal ||= left) - left, wordsTotal);
        },
      });
      if (pieces + prepared > 0 && !this.abort.signal.aborted) {
        log.info("prepared the built-in text model's vocabulary", { pieces, words: prepared, seconds: Math.round((performance.now() - started) / 100) / 10 });
      }
    } catch (err) {
      this.pendingWords = 0;
      log.warn("the built-in text model's common words were not prepared; documents' words are computed as they come", { err: errorMessage(err) });
    } finally {
      piecesTask.end();
      wordsTask.end();
    }
  }

  /** Stops after the run in progress (what was stored stays; the next start goes on from there). */
  stop(): void {
    this.abort.abort();
  }
}
