/** The operational routes' response schemas (TypeBox): the probes outside the versioned API. */
import { t } from "elysia";

const Check = t.Object({ ok: t.Boolean(), detail: t.String() });
/** Extension: the installed model folders (models/manifest.json) and which text model serves search. */
const Models = t.Object({
  installed: t.Array(
    t.Object({
      name: t.String(),
      role: t.String(),
      source: t.Union([t.String(), t.Null()]),
      version: t.Union([t.String(), t.Null()]),
      sha256: t.String(),
      license: t.Union([t.String(), t.Null()]),
    }),
  ),
  text_embedding: t.Object({
    configured: t.String(),
    in_use: t.String(),
    fallback_reason: t.Union([t.String(), t.Null()]),
    /** Document chunks waiting for their vectors: new documents, or the library being re-embedded after a model change. */
    pending_chunks: t.Integer(),
  }),
});
/** Extension: background work under way (jobs/background-work.ts); it pauses while files are analysed. */
const Preparing = t.Array(
  t.Object({ task: t.String(), model: t.String(), done: t.Integer(), total: t.Integer(), paused: t.Boolean() }),
);
/** Extension: how late the event loop ran over the last minute, and its stalls by cause (native/event-loop-monitor.ts). */
const StallMs = t.Object({ running: t.Integer(), waiting_for_cpu: t.Integer(), blocked: t.Integer() });
const EventLoop = t.Object({
  window_seconds: t.Integer(),
  samples: t.Integer(),
  lateness_p50_ms: t.Number(),
  lateness_p99_ms: t.Number(),
  lateness_max_ms: t.Number(),
  stalls: t.Integer(),
  stall_ms: StallMs,
});

export const Health = t.Object({ status: t.Literal("ok"), version: t.String() });

export const Ready = t.Object({ status: t.Literal("ready"), checks: t.Record(t.String(), Check), models: Models, preparing: Preparing, event_loop: EventLoop });
export const NotReady = t.Object({ status: t.Literal("not_ready"), checks: t.Record(t.String(), Check), models: Models, preparing: Preparing, event_loop: EventLoop });
