func.func @f(%x: tensor<1x3x8x8xf16>) -> tensor<1x3x4x4xf16> {
  %0 = ascend.MaxPool %x {ksize = array<i64: 1, 1, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x3x8x8xf16>) -> tensor<1x3x4x4xf16>
  func.return %0 : tensor<1x3x4x4xf16>
}
