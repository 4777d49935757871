func.func @net(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %r = ascend.Relu %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %c = ascend.Conv2D %r, %w {strides = array<i64: 1, 1, 1, 1>, name = "conv1"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %c : tensor<1x4x6x6xf32>
}
