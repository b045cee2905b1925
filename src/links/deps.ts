/**
 * The services the links feature uses: the crawler's fetcher, and the documents feature's (a
 * page's text is stored, chunked and embedded as a document's is). The composition root
 * (src/app.ts) builds them once and passes its context, which satisfies this interface.
 */
import type { DocumentDeps } from "../documents/deps.ts";
import type { LinkFetcher } from "./link-fetcher.ts";

export interface LinkDeps extends DocumentDeps {
  /** The link crawler's fetch policy and per-domain politeness. */
  links: LinkFetcher;
}
