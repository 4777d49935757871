func.func @f(%x: tensor<4x8xf32>, %w: tensor<7x2xf32>) -> tensor<4x2xf32> {
  %0 = ascend.MatMulV2 %x, %w : (tensor<4x8xf32>, tensor<7x2xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
