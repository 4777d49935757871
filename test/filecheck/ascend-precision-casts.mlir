// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision soc=ascend910b}' | filecheck %s --check-prefixes=CHECK,F16
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision_bf16 soc=ascend910b}' | filecheck %s --check-prefixes=CHECK,BF16
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision soc=ascend910b}' | ascend-opt --split-input-file -p 'ascend-precision{mode=allow_mix_precision soc=ascend910b}' | filecheck %s --check-prefixes=CHECK,F16
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision_bf16 soc=ascend910b}' | ascend-opt --split-input-file -p 'ascend-precision{mode=allow_mix_precision_bf16 soc=ascend910b}' | filecheck %s --check-prefixes=CHECK,BF16
// COM: A user's cast f32 -> LOW of a value the pass retyped to LOW would make an exact round trip
// COM: LOW -> f32 -> LOW (f16 or bf16), which vanishes (docs/design.md §5): no cast back to f32 is inserted for it,
// COM: and the user's cast, now an identity, is erased (its uses read the value). Not folded: a user cast whose
// COM: input stays f32, bf16 into an f32 -> f16 cast (kept, fed through f32), f32 -> f16 -> f32.
// COM: The last two RUN lines check that the pass is idempotent.

// CHECK-LABEL: func.func @to_f16
// F16:         %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xf16>
// F16-NEXT:    %[[R:.*]] = ascend.Relu %[[M]] {name = "relu"} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// F16-NEXT:    %[[UP:.*]] = ascend.Cast %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// F16-NEXT:    %[[L:.*]] = ascend.Log %[[UP]] {name = "log"}
// F16-NEXT:    func.return %[[R]], %[[L]]
// BF16:        %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xbf16>
// BF16-NEXT:   %[[UP:.*]] = ascend.Cast %[[M]] : (tensor<8x8xbf16>) -> tensor<8x8xf32>
// BF16-NEXT:   %[[U:.*]] = ascend.Cast %[[UP]] {name = "user"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
// BF16-NEXT:   %[[R:.*]] = ascend.Relu %[[U]] {name = "relu"} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// BF16-NEXT:   %[[L:.*]] = ascend.Log %[[UP]] {name = "log"}
// BF16-NEXT:   func.return %[[R]], %[[L]]
func.func @to_f16(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf16>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %u = ascend.Cast %m {name = "user"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %r = ascend.Relu %u {name = "relu"} : (tensor<8x8xf16>) -> tensor<8x8xf16>
  %l = ascend.Log %m {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %r, %l : tensor<8x8xf16>, tensor<8x8xf32>
}

// -----

// COM: The same with bf16: folded under the bf16 mode; an f16 value into the f32 -> bf16 cast goes through f32.
// CHECK-LABEL: func.func @to_bf16
// BF16:        %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xbf16>
// BF16-NEXT:   %[[R:.*]] = ascend.Relu %[[M]] {name = "relu"} : (tensor<8x8xbf16>) -> tensor<8x8xbf16>
// BF16-NEXT:   %[[UP:.*]] = ascend.Cast %[[M]] : (tensor<8x8xbf16>) -> tensor<8x8xf32>
// BF16-NEXT:   %[[L:.*]] = ascend.Log %[[UP]] {name = "log"}
// BF16-NEXT:   func.return %[[R]], %[[L]]
// F16:         %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xf16>
// F16-NEXT:    %[[UP:.*]] = ascend.Cast %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// F16-NEXT:    %[[U:.*]] = ascend.Cast %[[UP]] {name = "user"} : (tensor<8x8xf32>) -> tensor<8x8xbf16>
// F16-NEXT:    %[[R:.*]] = ascend.Relu %[[U]] {name = "relu"} : (tensor<8x8xbf16>) -> tensor<8x8xbf16>
// F16-NEXT:    %[[L:.*]] = ascend.Log %[[UP]] {name = "log"}
// F16-NEXT:    func.return %[[R]], %[[L]]
func.func @to_bf16(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xbf16>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %u = ascend.Cast %m {name = "user"} : (tensor<8x8xf32>) -> tensor<8x8xbf16>
  %r = ascend.Relu %u {name = "relu"} : (tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %l = ascend.Log %m {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %r, %l : tensor<8x8xbf16>, tensor<8x8xf32>
}

// -----

// COM: Log (black) stays f32: the user's f32 -> f16 cast of it is kept, and f32 -> f16 -> f32 is never folded
// COM: (the second Log reads the user's round trip, not %l).
// CHECK-LABEL: func.func @stays_f32
// CHECK:       %[[L:.*]] = ascend.Log %{{.*}} {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:  %[[K:.*]] = ascend.Cast %[[L]] {name = "kept"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
// CHECK-NEXT:  %[[T:.*]] = ascend.Cast %[[K]] {name = "trip"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK-NEXT:  %[[E:.*]] = ascend.Log %[[T]] {name = "log2"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:  func.return %[[K]], %[[E]]
func.func @stays_f32(%x: tensor<8x8xf32>) -> (tensor<8x8xf16>, tensor<8x8xf32>) {
  %l = ascend.Log %x {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %k = ascend.Cast %l {name = "kept"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %t = ascend.Cast %k {name = "trip"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %e = ascend.Log %t {name = "log2"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %k, %e : tensor<8x8xf16>, tensor<8x8xf32>
}
