import { describe, expect, test } from "bun:test";
import { ApiError } from "../src/errors.ts";
import {
  REVIEW_DOMAINS,
  REVIEW_LIMITS,
  applyCorrections,
  emptyCorrections,
  isReviewDomain,
  mergeCorrections,
  parseReviewBody,
  parseReviewDomain,
  validateAgainst,
  type Corrections,
} from "../src/extractions/review.ts";

/** The ApiError a call throws (fails the test if it does not throw one). */
function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected an ApiError");
}

const badRequestOf = (fn: () => unknown, code = "VALIDATION_ERROR") => {
  const error = apiError(fn);
  expect(error.status).toBe(400);
  expect(error.code as string).toBe(code);
  return error.detail;
};

const extraction = () => ({
  property: { type: "house", bedrooms: 3, address: null as null | Record<string, unknown> },
  rooms: [
    { name: "kitchen", area: 12 },
    { name: "bath", area: 5 },
    { name: "garage", area: 30 },
    { name: "closet", area: 1 },
  ],
  features: ["pool", "garden", "fireplace"],
  notes: "AI generated",
});

const corrections = (c: Partial<Corrections>): Corrections => ({ ...emptyCorrections(), ...c });

describe("domains", () => {
  test("exactly the spec's list; custom_schema is not reviewable", () => {
    expect(REVIEW_DOMAINS).toHaveLength(12);
    expect(isReviewDomain("real_estate")).toBe(true);
    expect(isReviewDomain("custom_schema")).toBe(false);
    expect(parseReviewDomain("pid")).toBe("pid");
    expect(badRequestOf(() => parseReviewDomain("nope"), "INVALID_DOMAIN")).toStartWith('domain_name: must be one of architectural_design, ce_plan,');
  });
});

describe("parseReviewBody", () => {
  test("accepts item_reviews and field_edits with any JSON values", () => {
    const body = {
      item_reviews: { "rooms.0": "confirmed", "rooms.2": "rejected" } as Record<string, "confirmed" | "rejected">,
      field_edits: { "property.bedrooms": 4, "property.address": { city: "Oslo" }, notes: null, "a-b.c_d.10": [1, "x"] },
    };
    expect(parseReviewBody(body)).toEqual(body);
    expect(parseReviewBody({ item_reviews: { rooms: "confirmed" } })).toEqual({ item_reviews: { rooms: "confirmed" }, field_edits: {} });
    expect(parseReviewBody({ field_edits: { notes: "x" }, item_reviews: null })).toEqual({ item_reviews: {}, field_edits: { notes: "x" } });
  });

  test("the body must be an object with at least one correction", () => {
    // Shape refusals read like every route's validation message: "invalid body: <field>: <rule>".
    expect(badRequestOf(() => parseReviewBody(null))).toStartWith("invalid body: must be a JSON object");
    expect(badRequestOf(() => parseReviewBody([]))).toStartWith("invalid body: must be a JSON object");
    expect(badRequestOf(() => parseReviewBody({}))).toBe("body: at least one of item_reviews or field_edits must be a non-empty object");
    expect(badRequestOf(() => parseReviewBody({ item_reviews: {}, field_edits: {} }))).toStartWith("body: at least one");
    expect(badRequestOf(() => parseReviewBody({ item_reviews: ["rooms.0"] }))).toStartWith("invalid body: item_reviews: must be an object mapping dot paths");
    expect(badRequestOf(() => parseReviewBody({ field_edits: "x" }))).toStartWith("invalid body: field_edits: must be an object");
    expect(badRequestOf(() => parseReviewBody({ field_edit: { a: 1 } }))).toBe("invalid body: field_edit: unknown field; expected item_reviews, field_edits");
  });

  test("item review values are exactly confirmed or rejected", () => {
    expect(badRequestOf(() => parseReviewBody({ item_reviews: { "rooms.0": "approved" } }))).toBe("invalid body: item_reviews.rooms.0: must be 'confirmed' or 'rejected'");
    expect(badRequestOf(() => parseReviewBody({ item_reviews: { "rooms.0": "Confirmed" } }))).toBe("invalid body: item_reviews.rooms.0: must be 'confirmed' or 'rejected'");
    expect(badRequestOf(() => parseReviewBody({ item_reviews: { "rooms.0": true } }))).toBe("invalid body: item_reviews.rooms.0: must be 'confirmed' or 'rejected'");
  });

  test("keys must be dot paths", () => {
    const cases: [string, string][] = [
      ["", "must not be empty"],
      ["rooms..name", "segments must not be empty"],
      [".rooms", "segments must not be empty"],
      ["rooms.", "segments must not be empty"],
      ["rooms[0]", "segments may contain only letters, digits, '_' and '-'"],
      ["room name", "segments may contain only"],
      ["a.__proto__.polluted", '"__proto__" is a reserved name'],
      ["constructor", '"constructor" is a reserved name'],
      [Array.from({ length: 11 }, () => "a").join("."), "at most 10 segments"],
      ["a".repeat(201), "at most 200 characters"],
    ];
    for (const [key, message] of cases) {
      const detail = badRequestOf(() => parseReviewBody({ field_edits: { [key]: 1 } }));
      expect(detail).toStartWith("field_edits: key ");
      expect(detail).toContain(message);
    }
    expect(badRequestOf(() => parseReviewBody({ item_reviews: { "a..b": "confirmed" } }))).toStartWith('item_reviews: key "a..b" is not a valid dot path');
    expect(parseReviewBody({ field_edits: { [Array.from({ length: 10 }, () => "a").join(".")]: 1 } })).toBeTruthy();
  });

  test("at most 500 keys per request, field_edits at most 64 KB", () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "confirmed"]));
    expect(Object.keys(parseReviewBody({ item_reviews: many(300), field_edits: { a: 1 } }).item_reviews)).toHaveLength(300);
    expect(parseReviewBody({ item_reviews: many(499), field_edits: { a: 1 } })).toBeTruthy();
    expect(badRequestOf(() => parseReviewBody({ item_reviews: many(500), field_edits: { a: 1 } }))).toBe(
      "body: at most 500 keys per request across item_reviews and field_edits (got 501)",
    );
    const detail = badRequestOf(() => parseReviewBody({ field_edits: { notes: "x".repeat(REVIEW_LIMITS.maxEditBytes) } }));
    expect(detail).toStartWith("field_edits: serialized size must be at most 65536 bytes");
  });

  test("values that are not JSON are refused", () => {
    expect(badRequestOf(() => parseReviewBody({ field_edits: { a: undefined } }))).toBe("field_edits.a: must be a JSON value");
    expect(badRequestOf(() => parseReviewBody({ field_edits: { a: () => 1 } }))).toBe("field_edits.a: must be a JSON value");
  });
});

describe("mergeCorrections", () => {
  test("repeated reviews merge additively; same keys are overwritten", () => {
    let stored = emptyCorrections();
    stored = mergeCorrections(stored, parseReviewBody({ item_reviews: { "rooms.0": "confirmed", "rooms.1": "rejected" } }));
    stored = mergeCorrections(stored, parseReviewBody({ field_edits: { "property.bedrooms": 4 } }));
    stored = mergeCorrections(stored, parseReviewBody({ item_reviews: { "rooms.1": "confirmed" }, field_edits: { "property.bedrooms": null } }));
    expect(stored).toEqual({
      item_reviews: { "rooms.0": "confirmed", "rooms.1": "confirmed" },
      // A null edit is kept as an edit to null, not a removal.
      field_edits: { "property.bedrooms": null },
    });
  });

  test("inputs are not modified", () => {
    const existing = corrections({ item_reviews: { a: "confirmed" } });
    const incoming = corrections({ field_edits: { b: 1 } });
    mergeCorrections(existing, incoming);
    expect(existing).toEqual(corrections({ item_reviews: { a: "confirmed" } }));
    expect(incoming).toEqual(corrections({ field_edits: { b: 1 } }));
  });

  test("an edit of a path supersedes stored corrections below it, not beside or above it", () => {
    const existing = corrections({
      item_reviews: { "rooms.3": "rejected", rooms: "confirmed", "roomsx.1": "rejected" },
      field_edits: { "rooms.0.name": "Kitchen", notes: "kept" },
    });
    const merged = mergeCorrections(existing, corrections({ field_edits: { rooms: [{ name: "hall" }] } }));
    expect(merged).toEqual({
      item_reviews: { rooms: "confirmed", "roomsx.1": "rejected" },
      field_edits: { notes: "kept", rooms: [{ name: "hall" }] },
    });
  });

  test("an extraction keeps at most 5000 corrections", () => {
    const batch = (from: number) => corrections({ item_reviews: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${from + i}`, "confirmed" as const])) });
    let stored = emptyCorrections();
    for (let i = 0; i < 10; i++) stored = mergeCorrections(stored, batch(i * 500));
    expect(Object.keys(stored.item_reviews)).toHaveLength(5000);
    expect(mergeCorrections(stored, batch(0))).toEqual(stored); // overwriting existing keys is fine
    expect(badRequestOf(() => mergeCorrections(stored, corrections({ field_edits: { x: 1 } })))).toBe(
      "body: an extraction keeps at most 5000 corrections; this review would make 5001",
    );
  });
});

describe("applyCorrections", () => {
  test("edits nested paths and array elements, creating objects along the way", () => {
    const original = extraction();
    const view = applyCorrections(
      original,
      corrections({
        field_edits: {
          "property.bedrooms": 4,
          "property.address.city": "Oslo", // address was null: becomes an object
          "rooms.1.name": "bathroom",
          "features.2": "wood stove",
          "meta.reviewer.note": "checked", // new keys
          notes: null,
        },
      }),
    ) as ReturnType<typeof extraction> & { meta: unknown };
    expect(view.property).toEqual({ type: "house", bedrooms: 4, address: { city: "Oslo" } });
    expect(view.rooms[1]).toEqual({ name: "bathroom", area: 5 });
    expect(view.features).toEqual(["pool", "garden", "wood stove"]);
    expect(view.meta).toEqual({ reviewer: { note: "checked" } });
    expect(view.notes).toBeNull();
    expect(original).toEqual(extraction()); // untouched
  });

  test("rejections remove the items seen at the original indexes, after edits", () => {
    const original = extraction();
    const view = applyCorrections(
      original,
      corrections({
        item_reviews: { "rooms.1": "rejected", "rooms.3": "rejected", "rooms.0": "confirmed", "features.0": "rejected", "property.type": "rejected" },
        field_edits: { "rooms.2.area": 28, "rooms.3.area": 2 },
      }),
    ) as ReturnType<typeof extraction>;
    expect(view.rooms).toEqual([
      { name: "kitchen", area: 12 },
      { name: "garage", area: 28 },
    ]);
    expect(view.features).toEqual(["garden", "fireplace"]);
    expect(view.property as unknown).toEqual({ bedrooms: 3, address: null });
    expect(original).toEqual(extraction());
  });

  test("nested rejections inside a rejected item and repeated indexes are harmless", () => {
    const view = applyCorrections(
      { groups: [{ tags: ["a", "b", "c"] }, { tags: ["d"] }] },
      corrections({ item_reviews: { "groups.0.tags.0": "rejected", "groups.0.tags.2": "rejected", "groups.1": "rejected", "groups.1.tags.0": "rejected" } }),
    );
    expect(view).toEqual({ groups: [{ tags: ["b"] }] });
  });

  test("an edit replacing an array is refined by deeper edits in any key order", () => {
    const view = applyCorrections(
      extraction(),
      corrections({ field_edits: { "rooms.0.name": "hall", rooms: [{ name: "x", area: 1 }] } }),
    ) as ReturnType<typeof extraction>;
    expect(view.rooms).toEqual([{ name: "hall", area: 1 }]);
  });

  test("corrections that no longer fit the output are skipped", () => {
    const view = applyCorrections(
      extraction(),
      corrections({ item_reviews: { "rooms.9": "rejected", "gone.x": "rejected" }, field_edits: { "notes.x": 1, "rooms.7.name": "x" } }),
    );
    expect(view).toEqual(extraction());
  });

  test("edited values are copies, not shared with the corrections", () => {
    const c = corrections({ field_edits: { property: { type: "condo" } } });
    const view = applyCorrections(extraction(), c) as { property: { type: string } };
    view.property.type = "changed";
    expect(c.field_edits.property).toEqual({ type: "condo" });
  });
});

describe("validateAgainst", () => {
  test("reviewed items must exist in the extraction", () => {
    expect(() => validateAgainst(extraction(), corrections({ item_reviews: { "rooms.3": "confirmed", "property.address": "rejected" } }))).not.toThrow();
    expect(badRequestOf(() => validateAgainst(extraction(), corrections({ item_reviews: { "rooms.4": "rejected" } })))).toBe(
      "item_reviews.rooms.4: no such item in the extraction",
    );
    expect(badRequestOf(() => validateAgainst(extraction(), corrections({ item_reviews: { "rooms.first": "rejected" } })))).toBe(
      "item_reviews.rooms.first: no such item in the extraction",
    );
  });

  test("edits may create keys but not go through scalars or past array ends", () => {
    expect(() => validateAgainst(extraction(), corrections({ field_edits: { "new.deep.key": 1, "rooms.0.color": "red" } }))).not.toThrow();
    expect(badRequestOf(() => validateAgainst(extraction(), corrections({ field_edits: { "notes.text": "x" } })))).toBe(
      'field_edits.notes.text: notes is a string, so it has no field "text"',
    );
    expect(badRequestOf(() => validateAgainst(extraction(), corrections({ field_edits: { "rooms.4.name": "x" } })))).toBe(
      "field_edits.rooms.4.name: rooms has 4 items; edit the whole array to add items",
    );
    expect(badRequestOf(() => validateAgainst(extraction(), corrections({ field_edits: { "features.last": "x" } })))).toBe(
      'field_edits.features.last: features is an array; "last" is not an index',
    );
    expect(badRequestOf(() => validateAgainst([1, 2], corrections({ field_edits: { "0.x": 1 } })))).toBe(
      'field_edits.0.x: 0 is a number, so it has no field "x"',
    );
  });

  test("does not modify the original", () => {
    const original = extraction();
    validateAgainst(original, corrections({ field_edits: { "property.bedrooms": 9, "x.y": 1 } }));
    expect(original).toEqual(extraction());
  });
});
