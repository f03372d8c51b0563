;; A stand-in for a circom 2 witness generator that traps on request (tests/witgen): it speaks the
;; protocol zkpipe's loader uses (the exports of circom's wasm, bn128's prime, one input "mode",
;; a witness of two values [1, mode]) and, by the value of "mode" set through setInputSignal:
;;   1: reads far outside its memory (out of bounds)   2: recurses without end (stack exhausted)
;;   3: executes unreachable   4: grows its memory until that fails, then reports exception 5 as
;;   circom's generated code does ("Not enough memory")   anything else: a valid witness.
;; Built into tests/data/witgen/trap.wasm with wabt's wat2wasm by tests/witgen/make-data.sh.
(module
  (import "runtime" "exceptionHandler" (func $exceptionHandler (param i32)))
  (import "runtime" "printErrorMessage" (func $printErrorMessage))
  (import "runtime" "writeBufferMessage" (func $writeBufferMessage))
  (import "runtime" "showSharedRWMemory" (func $showSharedRWMemory))
  (memory (export "memory") 1)
  ;; shared RW memory: 8 words at 0; mode at 64
  (func (export "getVersion") (result i32) (i32.const 2))
  (func (export "getMinorVersion") (result i32) (i32.const 2))
  (func (export "getPatchVersion") (result i32) (i32.const 3))
  (func (export "getSharedRWMemoryStart") (result i32) (i32.const 0))
  (func (export "getFieldNumLen32") (result i32) (i32.const 8))
  (func (export "readSharedRWMemory") (param $i i32) (result i32)
    (i32.load (i32.shl (local.get $i) (i32.const 2))))
  (func (export "writeSharedRWMemory") (param $i i32) (param $v i32)
    (i32.store (i32.shl (local.get $i) (i32.const 2)) (local.get $v)))
  (func (export "getRawPrime")
    ;; 21888242871839275222246405745257275088548364400416034343698204186575808495617, LE words
    (i32.store (i32.const 0) (i32.const 0xf0000001))
    (i32.store (i32.const 4) (i32.const 0x43e1f593))
    (i32.store (i32.const 8) (i32.const 0x79b97091))
    (i32.store (i32.const 12) (i32.const 0x2833e848))
    (i32.store (i32.const 16) (i32.const 0x8181585d))
    (i32.store (i32.const 20) (i32.const 0xb85045b6))
    (i32.store (i32.const 24) (i32.const 0xe131a029))
    (i32.store (i32.const 28) (i32.const 0x30644e72)))
  (func (export "init") (param $t i32) (i32.store (i32.const 64) (i32.const 0)))
  (func (export "getInputSignalSize") (param $h i32) (param $l i32) (result i32) (i32.const 1))
  (func (export "getInputSize") (result i32) (i32.const 1))
  (func (export "getWitnessSize") (result i32) (i32.const 2))
  (func $rec (param $n i32) (result i32)
    (local $r i32)
    ;; not a tail call (the store after it), so the C compiler cannot turn it into a loop
    (local.set $r (call $rec (i32.add (local.get $n) (i32.const 1))))
    (i32.store (i32.const 128) (local.get $r))
    (i32.add (local.get $r) (local.get $n)))
  (func (export "setInputSignal") (param $h i32) (param $l i32) (param $pos i32)
    (local $m i32)
    (local.set $m (i32.load (i32.const 0)))
    (i32.store (i32.const 64) (local.get $m))
    (if (i32.eq (local.get $m) (i32.const 1))
      (then (drop (i32.load (i32.const 0x7ffffff0)))))
    (if (i32.eq (local.get $m) (i32.const 2))
      (then (drop (call $rec (i32.const 0)))))
    (if (i32.eq (local.get $m) (i32.const 3))
      (then unreachable))
    (if (i32.eq (local.get $m) (i32.const 4))
      (then
        (block $done
          (loop $more
            (br_if $done (i32.eq (memory.grow (i32.const 16)) (i32.const -1)))
            (br $more)))
        (call $exceptionHandler (i32.const 5)))))
  (func (export "getWitness") (param $i i32)
    (local $k i32)
    (local.set $k (i32.const 0))
    (loop $z
      (i32.store (i32.shl (local.get $k) (i32.const 2)) (i32.const 0))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $z (i32.lt_u (local.get $k) (i32.const 8))))
    (if (i32.eqz (local.get $i))
      (then (i32.store (i32.const 0) (i32.const 1)))
      (else (i32.store (i32.const 0) (i32.load (i32.const 64))))))
  (func (export "getMessageChar") (result i32) (i32.const 0))
)
