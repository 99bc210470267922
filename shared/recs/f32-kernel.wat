;; Float32 kernels for serving recommendations, 4 values per step with WebAssembly SIMD: every
;; row's dot product with one vector (iALS: every item's score), and a weighted row added into a
;; sum (EASE: a history item's weights). Source of shared/recs/f32-kernel.ts (`npm run build:wasm`
;; writes it). Sums are float32, in the same order on every call: the same inputs give the same
;; scores, in training's validation, in evaluation and at serving.
(module
  (import "env" "memory" (memory 1))
  ;; out[i] = Σ_k rows[i·d + k] · u[k] for i < n: rows, u and out are float32 at byte offsets
  ;; $rows, $u, $out. Two SIMD sums of 4 lanes over d/8 steps, then the last d mod 8 one at a time.
  (func (export "scores") (param $rows i32) (param $u i32) (param $n i32) (param $d i32) (param $out i32)
    (local $i i32) (local $k i32) (local $a v128) (local $b v128) (local $s f32) (local $d8 i32) (local $r i32)
    (local.set $d8 (i32.and (local.get $d) (i32.const -8)))
    (block $rowsDone
      (loop $row
        (br_if $rowsDone (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $a (v128.const i32x4 0 0 0 0))
        (local.set $b (v128.const i32x4 0 0 0 0))
        (local.set $k (i32.const 0))
        (block $simdDone
          (loop $step
            (br_if $simdDone (i32.ge_u (local.get $k) (local.get $d8)))
            (local.set $a (f32x4.add (local.get $a)
              (f32x4.mul
                (v128.load (i32.add (local.get $rows) (i32.shl (local.get $k) (i32.const 2))))
                (v128.load (i32.add (local.get $u) (i32.shl (local.get $k) (i32.const 2)))))))
            (local.set $b (f32x4.add (local.get $b)
              (f32x4.mul
                (v128.load offset=16 (i32.add (local.get $rows) (i32.shl (local.get $k) (i32.const 2))))
                (v128.load offset=16 (i32.add (local.get $u) (i32.shl (local.get $k) (i32.const 2)))))))
            (local.set $k (i32.add (local.get $k) (i32.const 8)))
            (br $step)))
        (local.set $a (f32x4.add (local.get $a) (local.get $b)))
        (local.set $s
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $a)) (f32x4.extract_lane 1 (local.get $a)))
            (f32.add (f32x4.extract_lane 2 (local.get $a)) (f32x4.extract_lane 3 (local.get $a)))))
        (block $tailDone
          (loop $tail
            (br_if $tailDone (i32.ge_u (local.get $k) (local.get $d)))
            (local.set $s (f32.add (local.get $s)
              (f32.mul
                (f32.load (i32.add (local.get $rows) (i32.shl (local.get $k) (i32.const 2))))
                (f32.load (i32.add (local.get $u) (i32.shl (local.get $k) (i32.const 2)))))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $tail)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2))) (local.get $s))
        (local.set $rows (i32.add (local.get $rows) (i32.shl (local.get $d) (i32.const 2))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $row))))

  ;; acc[k] += f · v[k] for k < n: acc and v are float32 at byte offsets $acc and $v.
  (func (export "axpy") (param $acc i32) (param $v i32) (param $f f32) (param $n i32)
    (local $fv v128) (local $end i32)
    (local.set $fv (f32x4.splat (local.get $f)))
    (local.set $end (i32.add (local.get $v) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $v) (local.get $end)))
        (v128.store (local.get $acc)
          (f32x4.add (v128.load (local.get $acc)) (f32x4.mul (local.get $fv) (v128.load (local.get $v)))))
        (local.set $v (i32.add (local.get $v) (i32.const 16)))
        (local.set $acc (i32.add (local.get $acc) (i32.const 16)))
        (br $step)))
    (local.set $end (i32.add (local.get $end) (i32.shl (i32.and (local.get $n) (i32.const 3)) (i32.const 2))))
    (block $tdone
      (loop $tail
        (br_if $tdone (i32.ge_u (local.get $v) (local.get $end)))
        (f32.store (local.get $acc) (f32.add (f32.load (local.get $acc)) (f32.mul (local.get $f) (f32.load (local.get $v)))))
        (local.set $v (i32.add (local.get $v) (i32.const 4)))
        (local.set $acc (i32.add (local.get $acc) (i32.const 4)))
        (br $tail)))))
