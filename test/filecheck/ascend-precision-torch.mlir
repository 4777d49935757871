// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=torch}' | filecheck %s
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=torch amp_dtype=bf16 soc=ascend910b}' | filecheck %s --check-prefix=BF16
// COM: PyTorch autocast (CUDA lists): lower-precision ops (linear = MatMul + its BiasAdd, matmul / bmm, conv2d) run in
// COM: fp16; fp32 ops (softmax, layer_norm, exp, log, sum, the losses) in fp32; promote ops (cat) and unlisted ops (relu,
// COM: add) in the widest dtype of their inputs (the fp32 arguments are the module's parameters).

// CHECK-LABEL: func.func @block
// CHECK: ascend.MatMulV2 {{.*}}"fc"{{.*}} -> tensor<8x32xf16>
// CHECK: ascend.BiasAdd {{.*}}"fc_bias"{{.*}} -> tensor<8x32xf16>
// CHECK-NEXT: ascend.Relu {{.*}}"relu"{{.*}} -> tensor<8x32xf16>
// CHECK: ascend.LayerNorm {{.*}}"ln"{{.*}} -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
// CHECK: ascend.Add {{.*}}"residual"{{.*}} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
// CHECK: ascend.ConcatV2D {{.*}}"cat"{{.*}} -> tensor<8x64xf32>
// CHECK: ascend.SoftmaxV2 {{.*}}"softmax"{{.*}} -> tensor<8x64xf32>
// CHECK: ascend.Exp {{.*}}"exp"{{.*}} -> tensor<8x32xf32>
// CHECK: ascend.ConcatV2D {{.*}}"cat16"{{.*}} -> tensor<8x64xf16>
// BF16-LABEL: func.func @block
// BF16: ascend.MatMulV2 {{.*}}"fc"{{.*}} -> tensor<8x32xbf16>
// BF16: ascend.Relu {{.*}}"relu"{{.*}} -> tensor<8x32xbf16>
// BF16: ascend.SoftmaxV2 {{.*}}"softmax"{{.*}} -> tensor<8x64xf32>
func.func @block(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>, %g: tensor<32xf32>, %beta: tensor<32xf32>) -> (tensor<8x64xf32>, tensor<8x32xf32>, tensor<8x64xf32>) {
  %y = ascend.MatMulV2 %x, %w {name = "fc"} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %z = ascend.BiasAdd %y, %b {name = "fc_bias"} : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %r = ascend.Relu %z {name = "relu"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %n, %m, %v = ascend.LayerNorm %r, %g, %beta {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64, name = "ln"} : (tensor<8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  %a = ascend.Add %n, %r {name = "residual"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = ascend.ConcatV2D %a, %r {concat_dim = 1 : i64, name = "cat"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x64xf32>
  %s = ascend.SoftmaxV2 %c {name = "softmax"} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %e = ascend.Exp %r {name = "exp"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %c16 = ascend.ConcatV2D %r, %r {concat_dim = 1 : i64, name = "cat16"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x64xf32>
  func.return %s, %e, %c16 : tensor<8x64xf32>, tensor<8x32xf32>, tensor<8x64xf32>
}

// -----

// COM: attention: BatchMatMulV2 is torch.matmul / bmm (lower precision); the 0-d fp32 scale does not promote the
// COM: dimensioned fp16 scores; softmax is fp32; the context product casts the probabilities back to fp16.
// CHECK-LABEL: func.func @attention
// CHECK: ascend.BatchMatMulV2 {{.*}}"scores"{{.*}} -> tensor<2x4x4xf16>
// CHECK: ascend.Mul {{.*}}"scaled"{{.*}} -> tensor<2x4x4xf16>
// CHECK: ascend.SoftmaxV2 {{.*}}"probs"{{.*}} -> tensor<2x4x4xf32>
// CHECK: ascend.BatchMatMulV2 {{.*}}"context"{{.*}} -> tensor<2x4x8xf16>
// BF16-LABEL: func.func @attention
// BF16: ascend.BatchMatMulV2 {{.*}}"scores"{{.*}} -> tensor<2x4x4xbf16>
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %scale: tensor<f32>) -> tensor<2x4x8xf32> {
  %s = ascend.BatchMatMulV2 %q, %k {adj_x2 = true, name = "scores"} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %m = ascend.Mul %s, %scale {name = "scaled"} : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = ascend.SoftmaxV2 %m {name = "probs"} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %c = ascend.BatchMatMulV2 %p, %v {name = "context"} : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %c : tensor<2x4x8xf32>
}

// -----

// COM: conv block: batch_norm takes its fp16 input's dtype (its fp32 statistics do not promote it); relu,
// COM: max_pool2d and reshape are unlisted and stay fp16.
// CHECK-LABEL: func.func @conv_block
// CHECK: ascend.Conv2D {{.*}}"conv"{{.*}} -> tensor<2x4x8x8xf16>
// CHECK: ascend.BNInfer {{.*}}"bn"{{.*}} : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf16>
// CHECK: ascend.Relu {{.*}}"relu"{{.*}} -> tensor<2x4x8x8xf16>
// CHECK: ascend.MaxPool {{.*}}"pool"{{.*}} -> tensor<2x4x4x4xf16>
// CHECK: ascend.Reshape {{.*}}"flat"{{.*}} -> tensor<2x64xf16>
// CHECK: ascend.MatMulV2 {{.*}}"fc"{{.*}} -> tensor<2x10xf16>
func.func @conv_block(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %s: tensor<4xf32>, %o: tensor<4xf32>, %mean: tensor<4xf32>, %var: tensor<4xf32>, %wf: tensor<64x10xf32>) -> tensor<2x10xf32> {
  %c = ascend.Conv2D %x, %w, %b {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, name = "conv"} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %n = ascend.BNInfer %c, %s, %o, %mean, %var {name = "bn"} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %r = ascend.Relu %n {name = "relu"} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>, name = "pool"} : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  %f = ascend.Reshape %p {name = "flat"} : (tensor<2x4x4x4xf32>) -> tensor<2x64xf32>
  %y = ascend.MatMulV2 %f, %wf {name = "fc"} : (tensor<2x64xf32>, tensor<64x10xf32>) -> tensor<2x10xf32>
  func.return %y : tensor<2x10xf32>
}
