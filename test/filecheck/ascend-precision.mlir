// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision}' | filecheck %s
// RUN: ascend-opt %s --split-input-file --precision_mode_v2=mixed_float16 | filecheck %s
// RUN: ascend-opt %s --split-input-file --precision_mode=allow_mix_precision_fp16 | ascend-opt --split-input-file --precision_mode=allow_mix_precision | filecheck %s
// COM: allow_mix_precision (= allow_mix_precision_fp16 = v2 mixed_float16): fp32 ops are decided by list:
// COM: white -> fp16, black -> fp32, gray -> follows its producers. The last RUN line checks that the pass is idempotent.
// COM: Each inserted cast sits right before its first consumer (arguments are not cast at the top).

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[XH:.*]] = ascend.Cast %[[X]] : (tensor<8x16xf32>) -> tensor<8x16xf16>
// CHECK-NEXT: %[[WH:.*]] = ascend.Cast %[[W]] : (tensor<16x4xf32>) -> tensor<16x4xf16>
// CHECK-NEXT: %[[Y:.*]] = ascend.MatMulV2 %[[XH]], %[[WH]] {name = "fc1"} : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
// CHECK-NEXT: %[[BH:.*]] = ascend.Cast %[[B]] : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT: %[[Z:.*]] = ascend.BiasAdd %[[Y]], %[[BH]] : (tensor<8x4xf16>, tensor<4xf16>) -> tensor<8x4xf16>
// CHECK-NEXT: %[[R:.*]] = ascend.Relu %[[Z]] : (tensor<8x4xf16>) -> tensor<8x4xf16>
// CHECK-NEXT: %[[S:.*]] = ascend.SoftmaxV2 %[[R]] : (tensor<8x4xf16>) -> tensor<8x4xf16>
// CHECK-NEXT: %[[OUT:.*]] = ascend.Cast %[[S]] : (tensor<8x4xf16>) -> tensor<8x4xf32>
// CHECK-NEXT: func.return %[[OUT]] : tensor<8x4xf32>
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc1"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: Conv2D is white and fp16 only; Relu follows it; MaxPool (fp16 AI Core kernel) follows too.
// CHECK-LABEL: func.func @cnn
// CHECK-COUNT-2: ascend.Cast %{{.*}} : (tensor<{{.*}}xf32>) -> tensor<{{.*}}xf16>
// CHECK: %[[C:.*]] = ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// CHECK: %[[R:.*]] = ascend.Relu %[[C]] : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf16>
// CHECK: %[[P:.*]] = ascend.MaxPool %[[R]] {{.*}} : (tensor<1x4x6x6xf16>) -> tensor<1x4x3x3xf16>
// CHECK: %[[OUT:.*]] = ascend.Cast %[[P]] : (tensor<1x4x3x3xf16>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT: func.return %[[OUT]]
func.func @cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: Original fp16 ops stay fp16, even the black Log: only fp32 -> fp16 reduction exists.
// CHECK-LABEL: func.func @fp16_graph
// CHECK-NOT: ascend.Cast
// CHECK: ascend.MatMulV2 {{.*}} -> tensor<8x4xf16>
// CHECK: ascend.Exp {{.*}} -> tensor<8x4xf16>
// CHECK: ascend.Log {{.*}} -> tensor<8x4xf16>
// CHECK-NOT: ascend.Cast
// CHECK: func.return
func.func @fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: A gray chain after a black op stays fp32; after a white op it follows into fp16.
// CHECK-LABEL: func.func @gray_chain
// CHECK: %[[L:.*]] = ascend.Log %{{.*}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK: %[[A:.*]] = ascend.Relu %[[L]] : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK: %[[B:.*]] = ascend.Tanh %[[A]] : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK: %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xf16>
// CHECK: %[[C:.*]] = ascend.Relu %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf16>
// CHECK: %[[D:.*]] = ascend.Tanh %[[C]] : (tensor<8x8xf16>) -> tensor<8x8xf16>
// CHECK: %[[DO:.*]] = ascend.Cast %[[D]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK: func.return %[[B]], %[[DO]]
func.func @gray_chain(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %l = ascend.Log %x : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = ascend.Relu %l : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = ascend.Tanh %a : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = ascend.Relu %m : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %d = ascend.Tanh %c : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %b, %d : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// COM: Multi-input gray ops. Add: fp16 (MatMulV2) and fp32 (black ReduceSum) producers -> the more
// COM: precise fp32 wins. Mul: one fp16 producer and an argument (arguments do not vote) -> fp16.
// COM: Sub: only arguments -> keeps its original fp32. The fp32 copy of %m is made right before Add.
// CHECK-LABEL: func.func @gray_inputs
// CHECK-SAME: (%[[X:.*]]: tensor<8x8xf32>, %[[W:.*]]: tensor<8x8xf32>)
// CHECK: %[[XH:.*]] = ascend.Cast %[[X]] : (tensor<8x8xf32>) -> tensor<8x8xf16>
// CHECK: %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xf16>
// CHECK-NEXT: %[[S:.*]] = ascend.ReduceSum %[[X]] {{.*}} -> tensor<8x1xf32>
// CHECK-NEXT: %[[MF:.*]] = ascend.Cast %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK-NEXT: ascend.Add %[[MF]], %[[S]] : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[ARG:.*]] = ascend.Mul %[[M]], %[[XH]] : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
// CHECK-NEXT: ascend.Sub %[[X]], %[[W]] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: ascend.Cast %[[ARG]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK-NEXT: func.return
func.func @gray_inputs(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.ReduceSum %x {axes = array<i64: 1>, keep_dims = true} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %both = ascend.Add %m, %s : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %arg = ascend.Mul %m, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %none = ascend.Sub %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %both, %arg, %none : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// COM: Training step: forward and backward in fp16, the black optimizer update in fp32.
// COM: One cast of %x serves both MatMulV2s.
// CHECK-LABEL: func.func @train
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x4xf32>, %[[T:.*]]: tensor<8x4xf32>, %[[LR:.*]]: tensor<f32>)
// CHECK-COUNT-1: ascend.Cast %[[X]] :
// CHECK-NOT: ascend.Cast %[[X]] :
// CHECK: %[[Y:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x4xf16>
// CHECK: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf16>, tensor<8x4xf16>)
// CHECK: ascend.ReluGrad {{.*}} -> tensor<8x4xf16>
// CHECK: %[[DW:.*]] = ascend.MatMulV2 {{.*}} -> tensor<16x4xf16>
// CHECK-NEXT: %[[DWF:.*]] = ascend.Cast %[[DW]] : (tensor<16x4xf16>) -> tensor<16x4xf32>
// CHECK-NEXT: ascend.ApplyGradientDescent %[[W]], %[[LR]], %[[DWF]] {{.*}} -> tensor<16x4xf32>
func.func @train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>) -> (tensor<16x4xf32>, tensor<8xf32>) {
  %y = ascend.MatMulV2 %x, %w {name = "fc"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %r, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dr = ascend.ReluGrad %g, %r : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw = ascend.MatMulV2 %x, %dr {transpose_x1 = true, name = "fc_grad"} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  func.return %w2, %l : tensor<16x4xf32>, tensor<8xf32>
}

// -----

// COM: CNN training step: Conv2DBackpropFilter runs its fp16-in / fp32-out kernel, so the fp32
// COM: momentum update needs no cast of the gradient.
// CHECK-LABEL: func.func @cnn_train
// CHECK: ascend.MaxPoolGrad {{.*}} -> tensor<1x4x6x6xf16>
// CHECK: %[[DW:.*]] = ascend.Conv2DBackpropFilter {{.*}} : (tensor<1x3x8x8xf16>, tensor<1x4x6x6xf16>) -> tensor<4x3x3x3xf32>
// CHECK-NEXT: ascend.ApplyMomentumD %{{.*}}, %{{.*}}, %{{.*}}, %[[DW]], %{{.*}} : (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<f32>, tensor<4x3x3x3xf32>, tensor<f32>)
// CHECK-NOT: ascend.Cast
// CHECK: func.return
func.func @cnn_train(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dy: tensor<1x4x3x3xf32>, %acc: tensor<4x3x3x3xf32>, %lr: tensor<f32>, %mom: tensor<f32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>) {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %c {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  %dp = ascend.MaxPoolGrad %c, %p, %dy {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %dw = ascend.Conv2DBackpropFilter %x, %dp {filter_size = array<i64: 4, 3, 3, 3>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  %w2, %a2 = ascend.ApplyMomentumD %w, %acc, %lr, %dw, %mom : (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<f32>, tensor<4x3x3x3xf32>, tensor<f32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>)
  func.return %w2, %a2 : tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>
}

// -----

// COM: Integer tensors never change; BatchNorm of fp16 data keeps its fp32 statistics.
// CHECK-LABEL: func.func @mixed_dtypes
// CHECK-NOT: ascend.Cast
// CHECK: ascend.ArgMaxV2 %{{.*}} : (tensor<8x10xf32>) -> tensor<8xi32>
// CHECK: ascend.Add %{{.*}}, %{{.*}} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK: ascend.BatchNorm {{.*}} : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT: ascend.Cast
// CHECK: func.return
func.func @mixed_dtypes(%x: tensor<8x10xf32>, %i: tensor<8xi32>, %n: tensor<8xi32>, %bx: tensor<2x4x8x8xf16>, %st: tensor<4xf32>) -> (tensor<8xi32>, tensor<8xi32>, tensor<2x4x8x8xf16>) {
  %am = ascend.ArgMaxV2 %x : (tensor<8x10xf32>) -> tensor<8xi32>
  %ia = ascend.Add %i, %n : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %y, %m, %v = ascend.BatchNorm %bx, %st, %st, %st, %st : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>)
  func.return %am, %ia, %y : tensor<8xi32>, tensor<8xi32>, tensor<2x4x8x8xf16>
}

// -----

// COM: User casts are kept. A user cast votes with its output dtype; an exact round trip through a
// COM: user cast (f16 -> f32, wanted back in f16) uses the fp16 value instead of adding a cast.
// CHECK-LABEL: func.func @user_casts
// CHECK-SAME: (%[[H:.*]]: tensor<8x8xf16>, %[[X:.*]]: tensor<8x8xf32>, %[[W:.*]]: tensor<8x8xf32>)
// CHECK: %[[UP:.*]] = ascend.Cast %[[H]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[WH:.*]] = ascend.Cast %[[W]] : (tensor<8x8xf32>) -> tensor<8x8xf16>
// CHECK-NEXT: ascend.MatMulV2 %[[H]], %[[WH]]
// CHECK: %[[DOWN:.*]] = ascend.Cast %[[X]] : (tensor<8x8xf32>) -> tensor<8x8xf16>
// CHECK: ascend.Cast %[[DOWN]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK: ascend.MatMulV2 %[[DOWN]], %[[WH]]
// CHECK: ascend.Relu %[[UP]] : (tensor<8x8xf32>) -> tensor<8x8xf32>
func.func @user_casts(%h: tensor<8x8xf16>, %x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf16>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %up = ascend.Cast %h : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %m = ascend.MatMulV2 %up, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %down = ascend.Cast %x : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %back = ascend.Cast %down : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %n = ascend.MatMulV2 %back, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = ascend.Relu %up : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %m, %down, %n, %r : tensor<8x8xf32>, tensor<8x8xf16>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// COM: One cast per (value, dtype), shared by every consumer: %a is cast to fp32 once for Log and ReduceSum.
// CHECK-LABEL: func.func @shared
// CHECK: %[[A:.*]] = ascend.MatMulV2
// CHECK-NEXT: %[[AF:.*]] = ascend.Cast %[[A]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK-NOT: ascend.Cast %[[A]] :
// CHECK: ascend.Log %[[AF]]
// CHECK: ascend.Exp %[[A]] : (tensor<8x8xf16>) -> tensor<8x8xf16>
// CHECK: ascend.ReduceSum %[[AF]]
func.func @shared(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>) {
  %a = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = ascend.Log %a : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %d = ascend.Exp %a : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = ascend.ReduceSum %a : (tensor<8x8xf32>) -> tensor<f32>
  func.return %c, %d, %e : tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
}

// -----

// COM: A cast goes right before its first consumer, whatever op that is, and is shared by the later ones:
// COM: the fp32 copy of %m is made for the call and reused by the black Log; the cast of %r back to the
// COM: result dtype goes right before func.return.
// CHECK-LABEL: func.func @first_consumer
// CHECK: %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xf16>
// CHECK-NEXT: %[[R:.*]] = ascend.Relu %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf16>
// CHECK-NEXT: %[[MF:.*]] = ascend.Cast %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[C:.*]] = func.call @callee(%[[MF]]) : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[L:.*]] = ascend.Log %[[MF]] : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[RF:.*]] = ascend.Cast %[[R]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK-NEXT: func.return %[[RF]], %[[C]], %[[L]]
func.func private @callee(tensor<8x8xf32>) -> tensor<8x8xf32>
func.func @first_consumer(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = ascend.Relu %m : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = func.call @callee(%m) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %l = ascend.Log %m : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %r, %c, %l : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// COM: Constants do not vote; they are cast to what their consumers run in, and a constant whose
// COM: every use is then a cast to fp16 is stored in fp16 (ATC's fp16 weights): no cast is left.
// COM: The Reshape of an argument has no voting producer, keeps fp32 and is cast for MatMulV2.
// CHECK-LABEL: func.func @constants
// COM: The casts of MatMulV2's operands sit right before it, in operand order.
// CHECK: %[[C:.*]] = ascend.Const dense<1.000000e+00> : tensor<4xf16>
// CHECK-NEXT: %[[R:.*]] = ascend.Reshape %{{.*}} : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[RH:.*]] = ascend.Cast %[[R]] : (tensor<1x4xf32>) -> tensor<1x4xf16>
// CHECK-NEXT: %[[WH:.*]] = ascend.Cast %{{.*}} : (tensor<4x4xf32>) -> tensor<4x4xf16>
// CHECK-NEXT: %[[M:.*]] = ascend.MatMulV2 %[[RH]], %[[WH]], %[[C]] : (tensor<1x4xf16>, tensor<4x4xf16>, tensor<4xf16>) -> tensor<1x4xf16>
// CHECK-NEXT: ascend.Add %[[M]], %[[C]] : (tensor<1x4xf16>, tensor<4xf16>) -> tensor<1x4xf16>
func.func @constants(%x: tensor<4xf32>, %w: tensor<4x4xf32>) -> tensor<1x4xf32> {
  %c = ascend.Const dense<1.0> : tensor<4xf32>
  %r = ascend.Reshape %x : (tensor<4xf32>) -> tensor<1x4xf32>
  %m = ascend.MatMulV2 %r, %w, %c : (tensor<1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %a = ascend.Add %m, %c : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  func.return %a : tensor<1x4xf32>
}

// -----

// COM: Hand-written caps: fp16-in / fp32-out is MatMulV2's only fp16 kernel, so the white op takes it.
// COM: A kernel the op cannot verify with (Relu (f16) -> f32) is ignored: the white Relu stays fp32.
// CHECK-LABEL: func.func @hand_caps
// CHECK: %[[M:.*]] = ascend.MatMulV2 {{.*}} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf32>
// CHECK-NEXT: ascend.Relu %[[M]] {{.*}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
func.func @hand_caps(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = ascend.MatMulV2 %x, %x {caps = #ascend.caps<(f32, f32, f32) -> f32, (f16, f16, f32) -> f32>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = ascend.Relu %0 {caps = #ascend.caps<(f32) -> f32, (f16) -> f32>, list = #ascend.list<white>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %1 : tensor<4x4xf32>
}
