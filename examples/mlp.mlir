// A 64-128-10 MLP classifier for 8x8 digits, in fp32 (the built-in example).
func.func @mlp(%x: tensor<64x64xf32>, %w1: tensor<64x128xf32>, %b1: tensor<128xf32>, %w2: tensor<128x10xf32>, %b2: tensor<10xf32>) -> tensor<64x10xf32> {
  %0 = ascend.MatMulV2 %x, %w1 {name = "fc1"} : (tensor<64x64xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %1 = ascend.BiasAdd %0, %b1 {name = "fc1/bias"} : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %2 = ascend.Relu %1 {name = "relu1"} : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %3 = ascend.MatMulV2 %2, %w2 {name = "fc2"} : (tensor<64x128xf32>, tensor<128x10xf32>) -> tensor<64x10xf32>
  %4 = ascend.BiasAdd %3, %b2 {name = "fc2/bias"} : (tensor<64x10xf32>, tensor<10xf32>) -> tensor<64x10xf32>
  %5 = ascend.SoftmaxV2 %4 {name = "softmax"} : (tensor<64x10xf32>) -> tensor<64x10xf32>
  func.return %5 : tensor<64x10xf32>
}
