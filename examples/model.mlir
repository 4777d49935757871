// The model the README's first commands use: a small MLP classifier in fp32.
// ascend-opt examples/model.mlir --precision_mode=allow_mix_precision --modify_mixlist=examples/ops.json
func.func @mlp(%x: tensor<8x64xf32>, %w1: tensor<64x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x10xf32>, %b2: tensor<10xf32>) -> tensor<8x10xf32> {
  %0 = ascend.MatMulV2 %x, %w1 {name = "fc1"} : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %1 = ascend.BiasAdd %0, %b1 {name = "fc1/bias"} : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = ascend.Relu %1 {name = "relu1"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %3 = ascend.MatMulV2 %2, %w2 {name = "fc2"} : (tensor<8x32xf32>, tensor<32x10xf32>) -> tensor<8x10xf32>
  %4 = ascend.BiasAdd %3, %b2 {name = "fc2/bias"} : (tensor<8x10xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %5 = ascend.SoftmaxV2 %4 {name = "softmax"} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  func.return %5 : tensor<8x10xf32>
}
