// RUN: ascend-run %s | filecheck %s
// RUN: ascend-run %s --function half --print-memory | filecheck %s --check-prefix=HALF
// RUN: ascend-run %s --function overflow | filecheck %s --check-prefix=OVERFLOW
// RUN: ascend-run %s --function seeded --seed 3 | filecheck %s --check-prefix=SEEDED
// RUN: ascend-run %s --function seeded --seed 3 --precision_mode force_fp16 | filecheck %s --check-prefix=FP16

// COM: The first public function runs by default; constants make the values exact.
// CHECK:      @affine: 0 inputs, 1 output
// CHECK-NEXT: result0: tensor<2x3xf32> sum=21.0000 min=1.5000 max=5.5000
// CHECK-NEXT:   [1.5000, 2.5000, 3.5000, 3.5000, 4.5000, 5.5000]
// CHECK-NEXT: float status: clear
func.func @affine() -> tensor<2x3xf32> {
  %a = ascend.Const dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = ascend.Const dense<[[1.0, 0.0, -1.0], [0.0, 1.0, 2.0]]> : tensor<2x3xf32>
  %c = ascend.Const dense<[0.5, 0.5, 0.5]> : tensor<3xf32>
  %y = ascend.MatMulV2 %a, %b, %c : (tensor<2x2xf32>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// COM: fp16 rounds after every op; at 2048 the fp16 spacing is 2, and ties go to even:
// COM: 2048 + 1 -> 2048, 2048 + 3 -> 2052.
// HALF:      @half: 0 inputs, 1 output
// HALF-NEXT: result0: tensor<2xf16> sum=4100.0000 min=2048.0000 max=2052.0000
// HALF-NEXT:   [2048.0000, 2052.0000]
// HALF:      peak memory: 12 bytes of live tensors
func.func @half() -> tensor<2xf16> {
  %a = ascend.Const dense<[2048.0, 2048.0]> : tensor<2xf16>
  %b = ascend.Const dense<[1.0, 3.0]> : tensor<2xf16>
  %y = ascend.Add %a, %b : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  func.return %y : tensor<2xf16>
}

// COM: fp16 overflow is inf and sets the float status; NPUGetFloatStatus reads element 0 = 1.
// OVERFLOW:      result0: tensor<2xf16> sum=inf min=90.2500 max=inf
// OVERFLOW-NEXT:   [inf, 90.2500]
// OVERFLOW-NEXT: result1: tensor<8xf32> sum=1.0000 min=0.0000 max=1.0000
// OVERFLOW-NEXT:   [1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000]
// OVERFLOW-NEXT: float status: overflow
func.func @overflow() -> (tensor<2xf16>, tensor<8xf32>) {
  %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  %x = ascend.Const dense<[300.0, 9.5]> : tensor<2xf16>
  %y = ascend.Mul %x, %x : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  %g = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  func.return %y, %g : tensor<2xf16>, tensor<8xf32>
}

// COM: Random inputs are seeded: floats standard normal, integers in [0, 10).
// SEEDED:      @seeded: 2 inputs, 1 output
// SEEDED-NEXT: input %x: tensor<4xf32> sum={{-?[0-9]+\.[0-9]+}} min={{.*}} max={{.*}} (random, seed 3)
// SEEDED-NEXT:   [{{-?[0-9]+\.[0-9]+}}, {{-?[0-9]+\.[0-9]+}}, {{-?[0-9]+\.[0-9]+}}, {{-?[0-9]+\.[0-9]+}}]
// SEEDED-NEXT: input %i: tensor<4xi32> sum={{[0-9]+}} min={{[0-9]}} max={{[0-9]}} (random, seed 3)
// SEEDED:      result0: tensor<4xf32>
// FP16:        result0: tensor<4xf32>
// FP16:        float status: clear
func.func @seeded(%x: tensor<4xf32>, %i: tensor<4xi32>) -> tensor<4xf32> {
  %f = ascend.Cast %i : (tensor<4xi32>) -> tensor<4xf32>
  %y = ascend.Add %x, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
