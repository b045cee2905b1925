;; The vector scan's inner loop (dot-kernel.ts): dot products of a query with a run of rows of a
;; packed row-major f32 matrix, four lanes at a time, two accumulators so independent adds stay in
;; flight. Rows and the query are `stride` floats long, stride a multiple of 8 (rows are padded
;; with zeros). Compiled into dot-kernel-bytes.ts by `bun scripts/build-wasm.ts`.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; out[r - from] = dot(row r, query) for rows from..to (exclusive); every argument in bytes but
  ;; stride (floats) and the rows.
  (func (export "scores") (param $matrix i32) (param $query i32) (param $stride i32) (param $from i32) (param $to i32) (param $out i32)
    (local $row i32) (local $p i32) (local $q i32) (local $end i32) (local $rowBytes i32) (local $acc v128) (local $acc2 v128)
    (local.set $rowBytes (i32.shl (local.get $stride) (i32.const 2)))
    (local.set $row (local.get $from))
    (local.set $p (i32.add (local.get $matrix) (i32.mul (local.get $from) (local.get $rowBytes))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $row) (local.get $to)))
        (local.set $acc (v128.const f32x4 0 0 0 0))
        (local.set $acc2 (v128.const f32x4 0 0 0 0))
        (local.set $q (local.get $query))
        (local.set $end (i32.add (local.get $p) (local.get $rowBytes)))
        (block $rowDone
          (loop $columns
            (br_if $rowDone (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul (v128.load (local.get $p)) (v128.load (local.get $q)))))
            (local.set $acc2 (f32x4.add (local.get $acc2) (f32x4.mul (v128.load offset=16 (local.get $p)) (v128.load offset=16 (local.get $q)))))
            (local.set $p (i32.add (local.get $p) (i32.const 32)))
            (local.set $q (i32.add (local.get $q) (i32.const 32)))
            (br $columns)))
        (local.set $acc (f32x4.add (local.get $acc) (local.get $acc2)))
        (f32.store (local.get $out)
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
            (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $row (i32.add (local.get $row) (i32.const 1)))
        (br $rows))))
)
