/** The Datasets API is announced but not available: every /datasets route answers 404 (spec). */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";

const notAvailable = () => {
  throw new ApiError("NOT_AVAILABLE", "the Datasets API is not yet available in this release");
};

export function datasetRoutes() {
  return new Elysia({ tags: ["Datasets"] })
    .all("/datasets", notAvailable, { detail: { summary: "Datasets (not yet available: 404)" } })
    .all("/datasets/*", notAvailable, { detail: { summary: "Datasets (not yet available: 404)" } });
}
