// A small CNN for 1x8x8 digits, in fp32: Conv2D (fp16-only on ascend910) -> MaxPool -> dense.
func.func @cnn(%x: tensor<16x1x8x8xf32>, %k: tensor<8x1x3x3xf32>, %kb: tensor<8xf32>, %w: tensor<128x10xf32>, %b: tensor<10xf32>) -> tensor<16x10xf32> {
  %0 = ascend.Conv2D %x, %k {name = "conv1", strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<16x1x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<16x8x8x8xf32>
  %1 = ascend.BiasAdd %0, %kb {name = "conv1/bias"} : (tensor<16x8x8x8xf32>, tensor<8xf32>) -> tensor<16x8x8x8xf32>
  %2 = ascend.Relu %1 {name = "relu1"} : (tensor<16x8x8x8xf32>) -> tensor<16x8x8x8xf32>
  %3 = ascend.MaxPool %2 {name = "pool1", ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<16x8x8x8xf32>) -> tensor<16x8x4x4xf32>
  %4 = ascend.Reshape %3 {name = "flatten"} : (tensor<16x8x4x4xf32>) -> tensor<16x128xf32>
  %5 = ascend.MatMulV2 %4, %w {name = "fc"} : (tensor<16x128xf32>, tensor<128x10xf32>) -> tensor<16x10xf32>
  %6 = ascend.BiasAdd %5, %b {name = "fc/bias"} : (tensor<16x10xf32>, tensor<10xf32>) -> tensor<16x10xf32>
  %7 = ascend.SoftmaxV2 %6 {name = "softmax"} : (tensor<16x10xf32>) -> tensor<16x10xf32>
  func.return %7 : tensor<16x10xf32>
}
