;; Dot products of int8 item vectors with an int16 query (one row or many per call), and weighted
;; sums of int8 vectors into float32, 16 dimensions per step with WebAssembly SIMD. Source of
;; shared/search/int8-dot.ts (`npm run build:wasm` writes it).
(module
  (import "env" "memory" (memory 1))
  ;; Σ v[k]·q[k] for k < n: v is int8 at byte offset $v, q is int16 at byte offset $q. Each of
  ;; the four i32 lanes sums n/4 products of at most 127 × 16383, which fits for n up to 4096;
  ;; the lanes are added as f64.
  (func $dot (export "dot") (param $v i32) (param $q i32) (param $n i32) (result f64)
    (local $acc v128) (local $x v128) (local $end i32) (local $s i32)
    (local.set $end (i32.add (local.get $v) (i32.and (local.get $n) (i32.const -16))))
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $v) (local.get $end)))
        (local.set $x (v128.load (local.get $v)))
        (local.set $acc (i32x4.add (local.get $acc)
          (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $x)) (v128.load (local.get $q)))))
        (local.set $acc (i32x4.add (local.get $acc)
          (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $x)) (v128.load offset=16 (local.get $q)))))
        (local.set $v (i32.add (local.get $v) (i32.const 16)))
        (local.set $q (i32.add (local.get $q) (i32.const 32)))
        (br $step)))
    ;; The last n mod 16 dimensions, one at a time (at most 15 × 127 × 16383 in $s).
    (local.set $end (i32.add (local.get $end) (i32.and (local.get $n) (i32.const 15))))
    (block $tdone
      (loop $tail
        (br_if $tdone (i32.ge_u (local.get $v) (local.get $end)))
        (local.set $s (i32.add (local.get $s) (i32.mul (i32.load8_s (local.get $v)) (i32.load16_s (local.get $q)))))
        (local.set $v (i32.add (local.get $v) (i32.const 1)))
        (local.set $q (i32.add (local.get $q) (i32.const 2)))
        (br $tail)))
    (f64.add
      (f64.add
        (f64.add (f64.convert_i32_s (i32x4.extract_lane 0 (local.get $acc))) (f64.convert_i32_s (i32x4.extract_lane 1 (local.get $acc))))
        (f64.add (f64.convert_i32_s (i32x4.extract_lane 2 (local.get $acc))) (f64.convert_i32_s (i32x4.extract_lane 3 (local.get $acc)))))
      (f64.convert_i32_s (local.get $s))))

  ;; out[r] = the dot product of row r (n int8 values at $v + r·$stride) with the query at $q, for
  ;; r < $count, as f64 at byte offset $out: the same sums as `dot` row by row, in one call (a scan
  ;; of many short rows spends more on calls from JavaScript than on the products).
  (func (export "dots") (param $v i32) (param $q i32) (param $n i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 3))))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (f64.store (local.get $out) (call $dot (local.get $v) (local.get $q) (local.get $n)))
        (local.set $v (i32.add (local.get $v) (local.get $stride)))
        (local.set $out (i32.add (local.get $out) (i32.const 8)))
        (br $row))))

  ;; out[r] = the dot product of row idx[r] (n int8 values at $v + idx[r]·$stride; idx is u32 at
  ;; byte offset $idx) with the query at $q, for r < $count, as f64 at byte offset $out: `dots`
  ;; for rows picked out of order (an inverted list's).
  (func (export "dotsOf") (param $v i32) (param $q i32) (param $n i32) (param $idx i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 3))))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (f64.store (local.get $out)
          (call $dot (i32.add (local.get $v) (i32.mul (i32.load (local.get $idx)) (local.get $stride))) (local.get $q) (local.get $n)))
        (local.set $idx (i32.add (local.get $idx) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 8)))
        (br $row))))

  ;; acc[k] += f · v[k] for k < n: acc is float32 at byte offset $acc, v is int8 at byte offset $v.
  (func (export "axpy") (param $acc i32) (param $v i32) (param $f f32) (param $n i32)
    (local $fv v128) (local $x v128) (local $h v128) (local $end i32)
    (local.set $fv (f32x4.splat (local.get $f)))
    (local.set $end (i32.add (local.get $v) (i32.and (local.get $n) (i32.const -16))))
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $v) (local.get $end)))
        (local.set $x (v128.load (local.get $v)))
        (local.set $h (i16x8.extend_low_i8x16_s (local.get $x)))
        (v128.store (local.get $acc) (f32x4.add (v128.load (local.get $acc))
          (f32x4.mul (local.get $fv) (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $h))))))
        (v128.store offset=16 (local.get $acc) (f32x4.add (v128.load offset=16 (local.get $acc))
          (f32x4.mul (local.get $fv) (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $h))))))
        (local.set $h (i16x8.extend_high_i8x16_s (local.get $x)))
        (v128.store offset=32 (local.get $acc) (f32x4.add (v128.load offset=32 (local.get $acc))
          (f32x4.mul (local.get $fv) (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $h))))))
        (v128.store offset=48 (local.get $acc) (f32x4.add (v128.load offset=48 (local.get $acc))
          (f32x4.mul (local.get $fv) (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $h))))))
        (local.set $v (i32.add (local.get $v) (i32.const 16)))
        (local.set $acc (i32.add (local.get $acc) (i32.const 64)))
        (br $step)))
    (local.set $end (i32.add (local.get $end) (i32.and (local.get $n) (i32.const 15))))
    (block $tdone
      (loop $tail
        (br_if $tdone (i32.ge_u (local.get $v) (local.get $end)))
        (f32.store (local.get $acc) (f32.add (f32.load (local.get $acc))
          (f32.mul (local.get $f) (f32.convert_i32_s (i32.load8_s (local.get $v))))))
        (local.set $v (i32.add (local.get $v) (i32.const 1)))
        (local.set $acc (i32.add (local.get $acc) (i32.const 4)))
        (br $tail)))))
