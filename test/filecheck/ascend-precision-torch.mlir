// RUN: ascend-opt %s -p 'ascend-precision{policy=torch}' | filecheck %s
// RUN: ascend-opt %s -p 'ascend-precision{policy=torch amp_dtype=bf16 soc=ascend910b}' | filecheck %s --check-prefix=BF16
// COM: PyTorch autocast (CUDA lists): lower-precision ops (linear = MatMul + BiasAdd, conv2d) run in fp16; fp32 ops
// COM: (softmax, layer_norm, exp, log, sum, the losses) in fp32; promote ops (cat) and unlisted ops (relu, add) in the
// COM: widest dtype of their inputs (the fp32 arguments are the module's parameters).

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
