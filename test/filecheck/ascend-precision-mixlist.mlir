// RUN: ascend-opt %s --split-input-file --precision_mode=allow_mix_precision | filecheck %s --check-prefix=LIB
// RUN: ascend-opt %s --split-input-file --precision_mode=allow_mix_precision --modify_mixlist=%S/Inputs/mixlist-black-add.json | filecheck %s --check-prefix=BLACK
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision modify-mixlist="%S/Inputs/mixlist-black-add-white-remove.json"}' | filecheck %s --check-prefix=BLACK
// RUN: ascend-opt %s --split-input-file --precision_mode=allow_mix_precision --modify_mixlist=%S/Inputs/mixlist-white-remove.json | filecheck %s --check-prefix=GRAY
// RUN: ascend-opt %s --split-input-file --precision_mode_v2=mixed_float16 --modify_mixlist=%S/Inputs/mixlist-moves.json | filecheck %s --check-prefix=MOVES
// COM: --modify_mixlist, the CANN guide's three ways to treat the white-listed MatMulV2:
// COM:   BLACK: black-list to-add (from white to black), alone or with white-list to-remove: fp32.
// COM:   GRAY:  white-list to-remove only: MatMulV2 becomes gray (not black) and follows its producer.
// COM: MOVES: Exp gray -> white, Log black -> gray, ReduceSum black -> gray (to-remove), Relu gray -> black.

// LIB-LABEL: func.func @matmuls
// LIB: %[[P:.*]] = ascend.MatMul {{.*}} -> tensor<8x8xf16>
// LIB-NEXT: ascend.MatMulV2 %[[P]], {{.*}} -> tensor<8x8xf16>
// LIB: ascend.MatMulV2 {{.*}} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
// BLACK-LABEL: func.func @matmuls
// BLACK: %[[P:.*]] = ascend.MatMul {{.*}} -> tensor<8x8xf16>
// BLACK-NEXT: %[[PF:.*]] = ascend.Cast %[[P]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// BLACK-NEXT: ascend.MatMulV2 %[[PF]], {{.*}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// BLACK-NEXT: ascend.MatMulV2 {{.*}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// GRAY-LABEL: func.func @matmuls
// GRAY: %[[P:.*]] = ascend.MatMul {{.*}} -> tensor<8x8xf16>
// GRAY-NEXT: ascend.MatMulV2 %[[P]], {{.*}} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
// GRAY: ascend.MatMulV2 {{.*}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
func.func @matmuls(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %p = ascend.MatMul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = ascend.MatMulV2 %p, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %y, %z : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// LIB-LABEL: func.func @moves
// LIB-NOT: ascend.Cast
// LIB: ascend.Exp %{{.*}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// LIB: ascend.Log %{{.*}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// MOVES-LABEL: func.func @moves
// MOVES: %[[E:.*]] = ascend.Exp %{{.*}} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// MOVES-NEXT: %[[L:.*]] = ascend.Log %[[E]] : (tensor<8x8xf16>) -> tensor<8x8xf16>
// MOVES-NEXT: %[[S:.*]] = ascend.ReduceSum %[[L]] {{.*}} : (tensor<8x8xf16>) -> tensor<8xf16>
// MOVES-NEXT: %[[SF:.*]] = ascend.Cast %[[S]] : (tensor<8xf16>) -> tensor<8xf32>
// MOVES-NEXT: ascend.Relu %[[SF]] : (tensor<8xf32>) -> tensor<8xf32>
func.func @moves(%x: tensor<8x8xf32>) -> tensor<8xf32> {
  %e = ascend.Exp %x : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %l = ascend.Log %e : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.ReduceSum %l {axes = array<i64: 1>} : (tensor<8x8xf32>) -> tensor<8xf32>
  %r = ascend.Relu %s : (tensor<8xf32>) -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}
