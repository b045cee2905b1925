/**
 * Times every HTTP request into the metrics' request histogram, labelled by method, the route
 * template it matched (never the raw path, so ids do not explode the label set) and status.
 */
import { Elysia } from "elysia";
import type { Metrics } from "../metrics.ts";

export function requestMetrics(metrics: Metrics) {
  const started = new WeakMap<Request, number>();
  return new Elysia({ name: "mediabox-request-metrics" })
    .onRequest(({ request }) => {
      started.set(request, performance.now());
    })
    .onAfterResponse({ as: "global" }, ({ request, route, set }) => {
      const start = started.get(request);
      if (start === undefined) return;
      const status = typeof set.status === "number" ? set.status : 200;
      metrics.httpRequests.observe({ method: request.method, route: route || "unmatched", status: String(status) }, (performance.now() - start) / 1000);
    });
}
