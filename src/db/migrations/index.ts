/**
 * The ordered list of schema migrations. Append only: a released migration is never edited,
 * a change to the schema is a new file with the next number.
 */
import foundation from "./001_foundation.ts";
import ingest from "./002_ingest.ts";
import customSchemas from "./003_custom_schemas.ts";
import library from "./004_library.ts";
import images from "./005_images.ts";
import documents from "./006_documents.ts";
import chunkVocabulary from "./007_chunk_vocabulary.ts";
import stemmedSearch from "./008_stemmed_search.ts";
import textWordVectors from "./009_text_word_vectors.ts";
import videosAndLinks from "./010_videos_and_links.ts";
import linkCrawls from "./011_link_crawls.ts";
import accounts from "./012_accounts.ts";
import cloudStorage from "./013_cloud_storage.ts";
import jobListing from "./014_job_listing.ts";
import pageImages from "./015_page_images.ts";
import processingStatusListing from "./016_processing_status_listing.ts";
import textPieceVectors from "./017_text_piece_vectors.ts";
import documentTexts from "./018_document_texts.ts";
import rules from "./019_rules.ts";
import webhooks from "./020_webhooks.ts";
import watchedFolders from "./021_watched_folders.ts";
import cameraFacts from "./022_camera_facts.ts";
import mailAccounts from "./023_mail_accounts.ts";
import nearDuplicates from "./024_near_duplicates.ts";
import people from "./025_people.ts";
import duplicateThumbnails from "./026_duplicate_thumbnails.ts";
import tagSuggestions from "./027_tag_suggestions.ts";
import duplicateDismissals from "./028_duplicate_dismissals.ts";
import autoMatch from "./029_auto_match.ts";
import openMediaTypes from "./030_open_media_types.ts";
import videoFacts from "./031_video_facts.ts";
import timelineIndex from "./032_timeline_index.ts";
import linkCrawlTable from "./033_link_crawls.ts";
import imageFindings from "./034_image_findings.ts";
import imageCompliance from "./035_image_compliance.ts";
import faceReviews from "./036_face_reviews.ts";
import keywordPostings from "./037_keyword_postings.ts";
import imageFacts from "./038_image_facts.ts";
import documentFacts from "./039_document_facts.ts";
import fileSearchTerms from "./040_file_search_terms.ts";
import rateLimitWindows from "./041_rate_limit_windows.ts";
import firstRunToken from "./042_first_run_token.ts";
import batchObjectsInFlight from "./043_batch_objects_in_flight.ts";
import slotLeases from "./044_slot_leases.ts";
import type { Database } from "bun:sqlite";

export type Migration = { version: number; name: string } & (
  | { sql: string }
  /**
   * Code for what SQLite's SQL cannot do in a transaction with foreign keys on: rebuilding a table
   * (db/table-rebuild.ts), run with them off; `postgres` is the same change on PostgreSQL, whose
   * ALTER TABLE makes it directly.
   */
  | { run(db: Database): void; rebuildsTables: true; postgres: string }
  /** A change only PostgreSQL needs (what SQLite's own machinery, FTS5, does itself): SQLite records the version and runs nothing. */
  | { postgresOnly: string }
);

export const MIGRATIONS: Migration[] = [
  { version: 1, name: "foundation", sql: foundation },
  { version: 2, name: "ingest", sql: ingest },
  { version: 3, name: "custom_schemas", sql: customSchemas },
  { version: 4, name: "library", sql: library },
  { version: 5, name: "images", sql: images },
  { version: 6, name: "documents", sql: documents },
  { version: 7, name: "chunk_vocabulary", sql: chunkVocabulary },
  { version: 8, name: "stemmed_search", sql: stemmedSearch },
  { version: 9, name: "text_word_vectors", sql: textWordVectors },
  { version: 10, name: "videos_and_links", sql: videosAndLinks },
  { version: 11, name: "link_crawls", sql: linkCrawls },
  { version: 12, name: "accounts", sql: accounts },
  { version: 13, name: "cloud_storage", sql: cloudStorage },
  { version: 14, name: "job_listing", sql: jobListing },
  { version: 15, name: "page_images", sql: pageImages },
  { version: 16, name: "processing_status_listing", sql: processingStatusListing },
  { version: 17, name: "text_piece_vectors", sql: textPieceVectors },
  { version: 18, name: "document_texts", sql: documentTexts },
  { version: 19, name: "rules", sql: rules },
  { version: 20, name: "webhooks", sql: webhooks },
  { version: 21, name: "watched_folders", sql: watchedFolders },
  { version: 22, name: "camera_facts", sql: cameraFacts },
  { version: 23, name: "mail_accounts", sql: mailAccounts },
  { version: 24, name: "near_duplicates", sql: nearDuplicates },
  { version: 25, name: "people", sql: people },
  { version: 26, name: "duplicate_thumbnails", sql: duplicateThumbnails },
  { version: 27, name: "tag_suggestions", sql: tagSuggestions },
  { version: 28, name: "duplicate_dismissals", sql: duplicateDismissals },
  { version: 29, name: "auto_match", sql: autoMatch },
  { version: 30, name: "open_media_types", run: openMediaTypes, rebuildsTables: true, postgres: "ALTER TABLE files DROP CONSTRAINT files_media_type_check;" },
  { version: 31, name: "video_facts", sql: videoFacts },
  { version: 32, name: "timeline_index", sql: timelineIndex },
  { version: 33, name: "link_crawl_table", sql: linkCrawlTable },
  { version: 34, name: "image_findings", sql: imageFindings },
  { version: 35, name: "image_compliance", sql: imageCompliance },
  { version: 36, name: "face_reviews", sql: faceReviews },
  { version: 37, name: "keyword_postings", postgresOnly: keywordPostings },
  { version: 38, name: "image_facts", sql: imageFacts },
  { version: 39, name: "document_facts", sql: documentFacts },
  { version: 40, name: "file_search_terms", postgresOnly: fileSearchTerms },
  { version: 41, name: "rate_limit_windows", sql: rateLimitWindows },
  { version: 42, name: "first_run_token", sql: firstRunToken },
  { version: 43, name: "batch_objects_in_flight", sql: batchObjectsInFlight },
  { version: 44, name: "slot_leases", sql: slotLeases },
];
