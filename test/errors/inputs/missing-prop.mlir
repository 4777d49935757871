func.func @f(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf16> {
  %0 = "ascend.Conv2D"(%x, %w) : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf16>
  func.return %0 : tensor<1x4x6x6xf16>
}
